package session

// Role is a message's role, small enough to keep in every Node.
type Role uint8

// The roles of SPEC §2.
const (
	NoRole Role = iota
	System
	User
	Assistant
)

func (r Role) String() string { return [...]string{"", "system", "user", "assistant"}[r] }

// RoleOf returns the Role named s (NoRole for another name).
func RoleOf(s string) Role {
	switch s {
	case "system":
		return System
	case "user":
		return User
	case "assistant":
		return Assistant
	}
	return NoRole
}

// Stamp is the provider/model a user entry was sent to.
type Stamp struct{ Provider, Model string }
