package app

import "runtime/debug"

// modulePath is the module whose version Version reports.
const modulePath = "github.com/robotexec/robotexec"

// Version returns set, the program's version when its build set one, or
// else the module's version from the build info: the main module's, or
// the dependency's in a program that imports robotexec; "(devel)" for a
// local checkout.
func Version(set string) string {
	if set != "" {
		return set
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == modulePath {
				if dep.Replace != nil {
					// A local checkout (a replace directive) has no version.
					if dep.Replace.Version == "" {
						return "(devel)"
					}
					return dep.Replace.Version
				}
				return dep.Version
			}
		}
		if bi.Main.Path == modulePath && bi.Main.Version != "" {
			return bi.Main.Version
		}
	}
	return "(devel)"
}
