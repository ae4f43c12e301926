# bash completion for lr (lr completion bash)
_lr() {
	local cur prev cmd sub opts
	cur="${COMP_WORDS[COMP_CWORD]}"
	prev="${COMP_WORDS[COMP_CWORD-1]}"
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "show station dts iperf3 secret" -- "$cur"))
		return
	fi
	cmd="${COMP_WORDS[1]}"; sub="${COMP_WORDS[2]}"
	case "$prev" in
	--ethtool-api) COMPREPLY=($(compgen -W "auto netlink ioctl" -- "$cur")); return;;
	esac
	case "$cmd" in
	show)
		opts="--count --ethtool-api --interval --json --root --help";;
	station)
		case "$sub" in
		limits) opts="--type --help";;
		*) opts="--listen --help"; if [ "$COMP_CWORD" -eq 2 ] && [[ "$cur" != -* ]]; then COMPREPLY=($(compgen -W "limits" -- "$cur")); return; fi;;
		esac;;
	dts)
		case "$sub" in
		overlay) opts="-o --help";;
		*) if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=($(compgen -W "overlay" -- "$cur")); return; fi;;
		esac;;
	iperf3)
		opts="--client --server --help";;
	secret)
		opts="--help";;
	esac
	if [[ "$cur" == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -o filenames -F _lr lr
