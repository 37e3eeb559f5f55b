//go:build !race

package agents

const raceBuild = false
