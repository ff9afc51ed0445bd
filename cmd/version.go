package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// buildVersion is leaguectl's module version and the VCS revision it was
// built from, as the Go toolchain recorded them: "v1.2.0" from go
// install, "(devel)" from a checkout, with "-dirty" when the checkout had
// changes not committed.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (built without module support)"
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev == "" {
		return fmt.Sprintf("%s, %s", v, bi.GoVersion)
	}
	if at != "" {
		at = " " + at
	}
	return fmt.Sprintf("%s, revision %s%s%s, %s", v, rev, dirty, at, bi.GoVersion)
}

func newVersionCmd(ro *rootOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print leaguectl's version and the revision it was built from",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(ro.stdout, "leaguectl %s %s/%s\n", buildVersion(), runtime.GOOS, runtime.GOARCH)
			return runtimeErr(err)
		},
	}
}
