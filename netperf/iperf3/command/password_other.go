//go:build !linux

package command

import "errors"

func askPassword() (string, error) {
	return "", errors.New("asking for a password needs Linux; set IPERF3_PASSWORD")
}
