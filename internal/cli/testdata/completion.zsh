#compdef lr
# zsh completion for lr (lr completion zsh)

_lr_live() {
	local -a w
	w=(${(f)"$(${words[1]} __complete $1 2>/dev/null)"})
	compadd -a w
	[[ $2 == files ]] && _files
}

_lr() {
	local -a cmds
	cmds=(
		'show:read what decides an interface'\''s throughput'
		'station:the line'\''s station'
		'dts:device-tree overlays'
		'iperf3:an iperf3 that parses its own options'
		'secret:not listed'
	)
	if (( CURRENT == 2 )); then
		_describe command cmds
		return
	fi
	case $words[2] in
	show) _arguments \
			'--count=[how many samples (default 1)]:n: ' \
			'--ethtool-api=[how ethtool'\''s answers are read (default auto)]:auto|netlink|ioctl:(auto netlink ioctl)' \
			'--interval=[sample twice, D apart (default 2s)]:d: ' \
			'--json[print JSON]' \
			'--root=[read a captured tree under DIR]:dir:_files' \
			'*:argument:_lr_live interfaces';;
	station)
		if (( CURRENT == 3 )) && [[ $PREFIX != -* ]]; then
			compadd limits
			return
		fi
		case $words[3] in
		limits) _arguments \
			'--type=[the board TYPE]:type: ' \
			'*:argument:_files';;
		*) _arguments \
			'--listen=[HTTP ADDR (default \:8080)]:addr: ' \
			'*:argument:_files';;
		esac;;
	dts)
		if (( CURRENT == 3 )) && [[ $PREFIX != -* ]]; then
			compadd overlay
			return
		fi
		case $words[3] in
		overlay) _arguments \
			'-o=[write it to FILE]:file:_files' \
			'*:argument:_files';;
		esac;;
	iperf3) _arguments \
			'--client[client]' \
			'--server[server]' \
			'*:argument:_files';;
	secret) _arguments \
			'*:argument:_files';;
	esac
}

_lr "$@"
