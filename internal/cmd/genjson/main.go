// Command genjson writes protocol/json_gen.go (see package genjson).
//
//	go generate ./protocol
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/leaguectl/leaguectl/internal/genjson"
)

func main() {
	out := flag.String("o", "json_gen.go", "the file to write")
	flag.Parse()
	src, err := genjson.Generate()
	if err == nil {
		err = os.WriteFile(*out, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genjson:", err)
		os.Exit(1)
	}
}
