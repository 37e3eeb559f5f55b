module github.com/panto-dev/panto

go 1.26.8

require (
	github.com/alecthomas/kong v1.17.0
	github.com/google/uuid v1.6.0
	github.com/rogpeppe/go-internal v1.16.0
	github.com/tidwall/gjson v1.20.2
)

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.3.0 // indirect
	golang.org/x/sys v0.26.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
