package cmd

import (
	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// newHTTPCaller is the Client of an agent process: HTTP, with the generic
// timeout on calls that set none.
func newHTTPCaller(cfg config.Config) *transport.Client {
	return transport.NewClient(httprpc.NewClient(httprpc.ClientConfig{}), cfg.Timeouts.Generic)
}
