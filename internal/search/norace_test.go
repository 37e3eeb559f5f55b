//go:build !race

package search

const raceBuild = false
