package league

import "strconv"

// Pairing is one scheduled match.
type Pairing struct {
	Round   int    // 1-based
	MatchID string // R{round}M{k}
	A, B    string // player ids: PLAYER_A and PLAYER_B
}

// Schedule is the round robin of players by the circle method: n-1 rounds
// for an even n, n rounds for an odd n, where every player sits out one
// round (the bye holds the circle's fixed seat). Every pair meets once and
// every player is PLAYER_A as often as PLAYER_B, give or take one: the
// fixed seat alternates roles by round, and the other pairs by their place
// in the circle.
func Schedule(players []string) [][]Pairing {
	n := len(players)
	if n < 2 {
		return nil
	}
	seats := make([]string, 0, n+1)
	if n%2 == 1 {
		seats = append(seats, "") // the bye
	}
	seats = append(seats, players...)
	m := len(seats)
	fixed, ring := seats[0], seats[1:]
	rounds := make([][]Pairing, 0, m-1)
	line := make([]string, m)
	for r := 0; r < m-1; r++ {
		line[0] = fixed
		k := r % len(ring)
		copy(line[1:], ring[len(ring)-k:])
		copy(line[1+k:], ring[:len(ring)-k])
		round := make([]Pairing, 0, m/2)
		for i := 0; i < m/2; i++ {
			p, q := line[i], line[m-1-i]
			if p == "" || q == "" {
				continue
			}
			pFirst := i%2 == 1
			if i == 0 {
				pFirst = r%2 == 0
			}
			if !pFirst {
				p, q = q, p
			}
			round = append(round, Pairing{Round: r + 1, A: p, B: q})
		}
		for k := range round {
			round[k].MatchID = "R" + strconv.Itoa(r+1) + "M" + strconv.Itoa(k+1)
		}
		rounds = append(rounds, round)
	}
	return rounds
}
