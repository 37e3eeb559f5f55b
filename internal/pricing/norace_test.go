//go:build !race

package pricing

const raceBuild = false
