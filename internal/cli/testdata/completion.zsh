#compdef lr
# zsh completion for lr (lr completion zsh)

_lr() {
	local -a cmds
	cmds=(
		'show:read what decides an interface'\''s throughput'
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
			'--count=[how many samples (default 1)]:n:_files' \
			'--ethtool-api=[how ethtool'\''s answers are read (default auto)]:auto|netlink|ioctl:(auto netlink ioctl)' \
			'--interval=[sample twice, D apart (default 2s)]:d:_files' \
			'--json[print JSON]' \
			'--root=[read a captured tree under DIR]:dir:_files' \
			'*:argument:_files';;
	dts)
		if (( CURRENT == 3 )); then
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
