# bash completion for lr (lr completion bash)
_lr_values() { "${COMP_WORDS[0]}" __complete "$1" 2>/dev/null; }
_lr() {
	local cur prev cmd sub opts p1 p2 k
	cur="${COMP_WORDS[COMP_CWORD]}"
	prev="${COMP_WORDS[COMP_CWORD-1]}"
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "show station dts iperf3 secret" -- "$cur"))
		return
	fi
	cmd="${COMP_WORDS[1]}"; sub="${COMP_WORDS[2]}"
	case "$cmd" in
	show)
		case "$prev" in
		--count) COMPREPLY=(); return;;
		--ethtool-api) COMPREPLY=($(compgen -W "auto netlink ioctl" -- "$cur")); return;;
		--interval) COMPREPLY=(); return;;
		--root) COMPREPLY=($(compgen -f -- "$cur")); return;;
		esac
		opts="--count --ethtool-api --interval --json --root --help"; p1="interfaces"; p2=""
		;;
	station)
		case "$sub" in
		limits)
			case "$prev" in
			--type) COMPREPLY=(); return;;
			esac
			opts="--type --help"; p1=""; p2=""
			;;
		*)
			case "$prev" in
			--listen) COMPREPLY=(); return;;
			esac
			opts="--listen --help"; p1=""; p2=""
			if [ "$COMP_CWORD" -eq 2 ] && [[ "$cur" != -* ]]; then COMPREPLY=($(compgen -W "limits" -- "$cur")); return; fi;;
		esac;;
	dts)
		case "$sub" in
		overlay)
			case "$prev" in
			-o) COMPREPLY=($(compgen -f -- "$cur")); return;;
			esac
			opts="-o --help"; p1=""; p2=""
			;;
		*)
			if [ "$COMP_CWORD" -eq 2 ] && [[ "$cur" != -* ]]; then COMPREPLY=($(compgen -W "overlay" -- "$cur")); return; fi;;
		esac;;
	iperf3)
		opts="--client --server --help"; p1=""; p2=""
		;;
	secret)
		opts="--help"; p1=""; p2=""
		;;
	esac
	if [[ "$cur" == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi
	k="$p1"
	if [ -n "$p2" ] && [[ " ${p1#words:} " == *" $prev "* ]]; then k="$p2"; fi
	case "$k" in
	interfaces) COMPREPLY=($(compgen -W "$(_lr_values interfaces)" -- "$cur"));;
	plans+files) COMPREPLY=($(compgen -W "$(_lr_values plans)" -- "$cur")); COMPREPLY+=($(compgen -f -- "$cur"));;
	boards) COMPREPLY=($(compgen -W "$(_lr_values boards)" -- "$cur"));;
	profiles) COMPREPLY=($(compgen -W "$(_lr_values profiles)" -- "$cur"));;
	profiles+files) COMPREPLY=($(compgen -W "$(_lr_values profiles)" -- "$cur")); COMPREPLY+=($(compgen -f -- "$cur"));;
	knobs) COMPREPLY=($(compgen -W "$(_lr_values knobs)" -- "$cur"));;
	words:*) COMPREPLY=($(compgen -W "${k#words:}" -- "$cur"));;
	*) COMPREPLY=($(compgen -f -- "$cur"));;
	esac
}
complete -o filenames -F _lr lr
