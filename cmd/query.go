package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
)

// queryTypes maps the query subcommand words to LEAGUE_QUERY types.
var queryTypes = map[string]string{
	"standings":    protocol.QueryStandings,
	"schedule":     protocol.QuerySchedule,
	"next-match":   protocol.QueryNextMatch,
	"player-stats": protocol.QueryPlayerStats,
	"crosstable":   league.QueryCrosstable,
}

type queryOptions struct {
	*rootOptions
	manager     string
	leagueIDSet bool // --league-id was given
	player      string
	round       int
	roundSet    bool // --round was given
	adminToken  string
	as, token   string
	output      string
}

func newQueryCmd(ro *rootOptions) *cobra.Command {
	o := &queryOptions{rootOptions: ro}
	var words []string
	for w := range queryTypes {
		words = append(words, w)
	}
	sort.Strings(words)
	c := &cobra.Command{
		Use:   "query " + strings.Join(words, "|"),
		Short: "Ask a league manager for standings, the schedule, a player's next match or stats, or the crosstable",
		Long: `Ask a league manager with LEAGUE_QUERY. As an operator (--admin-token, or no
token from the manager's own host) or as a registered agent (--as ID --token T,
where ID is P01 or REF01, or player:P01 / referee:REF01).`,
		Example: `  leaguectl query standings --manager http://127.0.0.1:8000/mcp
  leaguectl query schedule --manager http://127.0.0.1:8000/mcp --round 2 --player P01
  leaguectl query next-match --manager http://127.0.0.1:8000/mcp --as P01 --token tok_player_P01_…`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				// A usage error (exit 2) that says what would do.
				return usagef(fmt.Errorf("query needs a query type: %s", strings.Join(words, ", ")))
			}
			return cobra.ExactArgs(1)(c, args)
		},
		ValidArgs: words,
		RunE: func(c *cobra.Command, args []string) error {
			cfg, err := ro.loadConfig(c)
			if err != nil {
				return err
			}
			o.leagueIDSet = c.Flags().Changed("league-id")
			o.roundSet = c.Flags().Changed("round")
			return runtimeErr(runQuery(c.Context(), o, args[0], cfg))
		},
	}
	c.Flags().StringVarP(&o.manager, "manager", "m", "", "the league manager's endpoint (required, unless LEAGUECTL_MANAGER or the config's manager gives it)")
	c.Flags().StringVar(&o.player, "player", "", "the player of next-match and player-stats (default: --as); of schedule, only that player's matches")
	c.Flags().IntVar(&o.round, "round", 0, "schedule: only this round (default: every round, asked for a part at a time)")
	c.Flags().StringVar(&o.adminToken, "admin-token", "", "the manager's admin token (or "+adminTokenEnv+")")
	c.Flags().StringVar(&o.as, "as", "", "ask as this registered agent")
	c.Flags().StringVar(&o.token, "token", "", "the auth token of --as")
	c.Flags().StringVarP(&o.output, "output", "o", "table", "table or json")
	_ = c.MarkFlagRequired("manager")
	return c
}

func runQuery(ctx context.Context, o *queryOptions, word string, cfg config.Config) error {
	if o.output != "table" && o.output != "json" {
		return usagef(fmt.Errorf("--output must be table or json, got %q", o.output))
	}
	raw, data, err := query(ctx, o, word, cfg)
	if err != nil {
		return err
	}
	if o.output == "json" {
		_, err := o.stdout.Write(append(raw, '\n'))
		return err
	}
	return writeQueryTable(o.stdout, queryTypes[word], data)
}

// query asks the manager the query word names and returns its answer, as
// it came, and the answer's data; for the schedule of every round, the
// whole of it, asked for a part at a time. The command and the MCP tools
// standings, schedule and next_match all ask here. It prints nothing.
func query(ctx context.Context, o *queryOptions, word string, cfg config.Config) (raw, data jsontext.Value, err error) {
	qt, ok := queryTypes[word]
	if !ok {
		return nil, nil, usagef(fmt.Errorf("unknown query %q: want standings, schedule, next-match, player-stats or crosstable", word))
	}
	if err := checkURL("--manager", o.manager); err != nil {
		return nil, nil, err
	}
	if (o.as == "") != (o.token == "") {
		return nil, nil, usagef(fmt.Errorf("--as and --token go together"))
	}
	if o.as != "" && o.adminToken != "" {
		return nil, nil, usagef(fmt.Errorf("--admin-token asks as the operator, --as and --token as an agent: give one or the other"))
	}
	if (qt == protocol.QueryNextMatch || qt == protocol.QueryPlayerStats) && o.player == "" && o.as == "" {
		return nil, nil, usagef(fmt.Errorf("query %s needs the player: --player ID (or --as ID --token T)", word))
	}
	if o.roundSet && qt != protocol.QuerySchedule {
		return nil, nil, usagef(fmt.Errorf("--round goes with query schedule, not %s", word))
	}
	if o.roundSet && o.round < 1 {
		return nil, nil, usagef(fmt.Errorf("--round must be 1 or more, got %d", o.round))
	}
	q := &protocol.LeagueQuery{
		Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeLeagueQuery,
			ConversationID: "conv-query-" + word},
		QueryType: qt,
	}
	if o.player != "" || o.round != 0 {
		q.QueryParams = &protocol.QueryParams{PlayerID: o.player, RoundID: o.round}
	}
	if id, given := leagueIDGiven(o.leagueIDSet, cfg); given {
		q.LeagueID = id // another league than the manager's is E008
	}
	method := league.MethodAdminQuery
	if o.as != "" {
		sender, err := senderOf(o.as)
		if err != nil {
			return nil, nil, err
		}
		q.Sender, q.AuthToken, method = sender, o.token, protocol.ToolName(protocol.TypeLeagueQuery)
	} else if t := adminTokenFrom(o.adminToken); t != "" {
		q.AuthToken = t
	}
	client := newHTTPCaller(cfg)
	ask := func(q *protocol.LeagueQuery) (raw, data jsontext.Value, err error) {
		if err := callBusy(ctx, func() error { return client.Call(ctx, o.manager, method, q, &raw) }); err != nil {
			return nil, nil, err
		}
		var resp struct {
			protocol.LeagueQueryResponse
			Data  jsontext.Value     `json:"data"`
			Error *league.QueryError `json:"error"`
		}
		if err := json.Unmarshal(raw, &resp); err != nil {
			return nil, nil, &exitError{code: ExitRuntime, err: fmt.Errorf("manager's answer: %w", err)}
		}
		if !resp.Success {
			msg := "query failed"
			var code protocol.Code
			if resp.Error != nil {
				msg, code = resp.Error.Message, resp.Error.ErrorCode
			}
			return nil, nil, &protocol.Error{Code: orCode(code, protocol.ErrInvalidMessageFormat), Detail: msg}
		}
		return raw, resp.Data, nil
	}
	if raw, data, err = ask(q); err != nil {
		return nil, nil, err
	}
	if qt == protocol.QuerySchedule && o.round == 0 {
		return wholeSchedule(ask, q, raw, data)
	}
	return raw, data, nil
}

// wholeSchedule is the whole schedule of a manager that answered q, a
// GET_SCHEDULE of every round, with its first part (raw, and its data):
// the rounds of each answer, until one has no next_round_id, asked for
// round by round; as one answer, the first, whose data holds every round.
func wholeSchedule(ask func(*protocol.LeagueQuery) (raw, data jsontext.Value, err error), q *protocol.LeagueQuery,
	raw, data jsontext.Value) (jsontext.Value, jsontext.Value, error) {
	type part struct {
		Rounds []jsontext.Value `json:"rounds"`
		Next   int              `json:"next_round_id"`
	}
	var p part
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, nil, runtimeErr(fmt.Errorf("manager's answer: %w", err))
	}
	if p.Next == 0 {
		return raw, data, nil // all of it
	}
	rounds := p.Rounds
	next := *q
	params := protocol.QueryParams{}
	if q.QueryParams != nil {
		params = *q.QueryParams
	}
	next.QueryParams = &params
	for p.Next != 0 {
		after := p.Next
		params.RoundID = p.Next
		_, d, err := ask(&next)
		if err != nil {
			return nil, nil, err
		}
		p = part{}
		if err := json.Unmarshal(d, &p); err != nil {
			return nil, nil, runtimeErr(fmt.Errorf("manager's answer: %w", err))
		}
		if p.Next != 0 && p.Next <= after {
			return nil, nil, runtimeErr(fmt.Errorf("manager's answer: next_round_id %d after round %d", p.Next, after))
		}
		rounds = append(rounds, p.Rounds...)
	}
	whole, err := json.Marshal(struct {
		Rounds []jsontext.Value `json:"rounds"`
	}{rounds})
	if err != nil {
		return nil, nil, runtimeErr(err)
	}
	raw, err = withData(raw, whole)
	if err != nil {
		return nil, nil, runtimeErr(fmt.Errorf("manager's answer: %w", err))
	}
	return raw, whole, nil
}

// withData is the JSON object raw with its member "data" replaced by
// data, its other members as they were, in their order.
func withData(raw, data jsontext.Value) (jsontext.Value, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out)
	tok, err := dec.ReadToken()
	if err != nil || tok.Kind() != '{' {
		return nil, fmt.Errorf("not an object: %v", err)
	}
	if err := enc.WriteToken(tok); err != nil {
		return nil, err
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		key := name.String() // before the next read voids name
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		if key == "data" {
			v = data
		}
		if err := enc.WriteToken(jsontext.String(key)); err != nil {
			return nil, err
		}
		if err := enc.WriteValue(v); err != nil {
			return nil, err
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	if err := enc.WriteToken(jsontext.EndObject); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(out.Bytes()), nil
}

// busyTries bounds the tries of a query the manager refuses as busy.
const busyTries = 5

// callBusy makes call, and again, after a pause that doubles, while the
// manager refuses it as busy (E016: it builds as many schedule answers
// as it will at once, and has waited for a turn already); other errors
// are the command's at once.
func callBusy(ctx context.Context, call func() error) error {
	pause := 250 * time.Millisecond
	for try := 1; ; try++ {
		err := call()
		if try == busyTries || protocol.CodeOf(err) != protocol.ErrServiceUnavailable {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		pause *= 2
	}
}

func orCode(c, otherwise protocol.Code) protocol.Code {
	if c.Known() {
		return c
	}
	return otherwise
}

// senderOf reads --as: "P01", "REF01", "player:P01" or "referee:REF01".
func senderOf(as string) (string, error) {
	if strings.Contains(as, ":") {
		if _, err := protocol.ParseSender(as); err != nil {
			return "", usagef(fmt.Errorf("--as: %v", err))
		}
		return as, nil
	}
	role := protocol.RolePlayer
	if strings.HasPrefix(as, "REF") {
		role = protocol.RoleReferee
	}
	s := string(role) + ":" + as
	if _, err := protocol.ParseSender(s); err != nil {
		return "", usagef(fmt.Errorf("--as: %v", err))
	}
	return s, nil
}

// standingsData is the data of GET_STANDINGS.
type standingsData struct {
	RoundID int `json:"round_id" jsonschema:"the round under way or last played (0: before the first)"`
	// Absent from other managers than ours.
	RoundsCompleted *int              `json:"rounds_completed,omitzero" jsonschema:"the last round whose end was announced"`
	Standings       []league.Standing `json:"standings" jsonschema:"the players, best first, each with its Elo rating and the half-width of its 95% interval (elo_error)"`
}

// nextMatchData is the data of GET_NEXT_MATCH.
type nextMatchData struct {
	NextMatch *league.NextMatch `json:"next_match" jsonschema:"the player's next match; null when there is none"`
	State     string            `json:"state" jsonschema:"the league's state: why there is no next match, when there is none"`
}

func writeQueryTable(w io.Writer, qt string, data jsontext.Value) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	defer tw.Flush()
	switch qt {
	case protocol.QueryStandings:
		var d standingsData
		if err := json.Unmarshal(data, &d); err != nil {
			return runtimeErr(err)
		}
		switch {
		case d.RoundID == 0:
			fmt.Fprintf(w, "Standings before the first round\n\n")
		case d.RoundsCompleted != nil && *d.RoundsCompleted < d.RoundID:
			fmt.Fprintf(w, "Standings during round %d (%d completed)\n\n", d.RoundID, *d.RoundsCompleted)
		default:
			fmt.Fprintf(w, "Standings after round %d\n\n", d.RoundID)
		}
		writeRows(tw, d.Standings)
	case protocol.QuerySchedule:
		var d league.ScheduleData
		if err := json.Unmarshal(data, &d); err != nil {
			return runtimeErr(err)
		}
		if len(d.Rounds) == 0 {
			_, err := fmt.Fprintln(w, noScheduleYet(d.State, "No matches."))
			return err
		}
		fmt.Fprintln(tw, "ROUND\tMATCH\tPLAYER_A\tPLAYER_B\tREFEREE\tSTATUS\tRESULT")
		for _, r := range d.Rounds {
			for _, m := range r.Matches {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", m.RoundID, m.MatchID, m.PlayerAID, m.PlayerBID,
					dash(m.RefereeID), m.Status, dash(m.Result))
			}
		}
	case protocol.QueryNextMatch:
		var d nextMatchData
		if err := json.Unmarshal(data, &d); err != nil {
			return runtimeErr(err)
		}
		if d.NextMatch == nil {
			_, err := fmt.Fprintln(w, noScheduleYet(d.State, "No match left to play."))
			return err
		}
		n := d.NextMatch
		fmt.Fprintf(w, "Next match: %s (round %d) against %s as %s, referee %s\n", n.MatchID, n.RoundID,
			n.OpponentID, n.Role, dash(n.RefereeEndpoint))
	case protocol.QueryPlayerStats:
		var d struct {
			Player  *league.Standing        `json:"player"`
			Matches []league.ScheduledMatch `json:"matches"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			return runtimeErr(err)
		}
		if d.Player != nil {
			writeRows(tw, []league.Standing{*d.Player})
			fmt.Fprintln(tw)
		}
		if d.Player == nil {
			fmt.Fprintln(tw, "ROUND\tMATCH\tPLAYER_A\tPLAYER_B\tSTATUS\tRESULT")
			for _, m := range d.Matches {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", m.RoundID, m.MatchID, m.PlayerAID, m.PlayerBID, m.Status, dash(m.Result))
			}
			break
		}
		fmt.Fprintln(tw, "ROUND\tMATCH\tROLE\tSTATUS\tRESULT")
		for _, m := range d.Matches {
			role, got := sideOf(m, d.Player.PlayerID)
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", m.RoundID, m.MatchID, role, m.Status, got)
		}
	case league.QueryCrosstable:
		var d struct {
			Crosstable league.Crosstable `json:"crosstable"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			return runtimeErr(err)
		}
		return writeCrosstable(w, d.Crosstable, nil)
	}
	return nil
}

// sideOf is player's role in m (A or B) and its result from its side,
// "W vs P02" ("-" for a result not yet known): m.Result holds the
// statuses of A and B, "WIN-LOSS".
func sideOf(m league.ScheduledMatch, player string) (role, result string) {
	role, opponent, side := "A", m.PlayerBID, 0
	if m.PlayerBID == player {
		role, opponent, side = "B", m.PlayerAID, 1
	}
	got := "-"
	if a, b, ok := strings.Cut(m.Result, "-"); ok {
		got = [2]string{a, b}[side]
		switch got {
		case protocol.ResultWin:
			got = "W"
		case protocol.ResultDraw:
			got = "D"
		case protocol.ResultTechnicalLoss:
			got = "TL"
		case protocol.ResultLoss:
			got = "L"
		}
	}
	return role, got + " vs " + opponent
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// noScheduleYet is what a table says of a league in state that has no
// match to show: that it has not started, or is starting, or otherwise.
func noScheduleYet(state, otherwise string) string {
	switch state {
	case league.StateRegistration:
		return "The league has not started: no schedule yet."
	case league.StateStarting:
		return "The league is starting: its schedule is being written."
	}
	return otherwise
}
