package player

// HistoryRoom is the player's history, whose capacity is the room a round
// announcement made for it.
func (p *Player) HistoryRoom() []Game {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.history
}

// StandingsKept reports whether the latest standings are kept unread.
func (p *Player) StandingsKept() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.standings == nil && p.update != nil && p.update.Standings == nil
}
