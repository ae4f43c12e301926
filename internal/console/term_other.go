//go:build !linux

package console

import "os"

// Elsewhere linerate's text is not wrapped: it runs on Linux boards and stations.
func isTerminal(*os.File) bool { return false }

func windowWidth(*os.File) int { return 0 }

// QuietKernel: no kernel console to keep quiet here.
func QuietKernel(*os.File) func() { return func() {} }
