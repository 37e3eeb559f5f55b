//go:build !race

package fsckcmd

const raceBuild = false
