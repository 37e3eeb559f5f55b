//go:build !race

package logcmd

const raceBuild = false
