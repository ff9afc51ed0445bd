package protocol

import (
	"testing"

	"github.com/matryer/is"
)

// TestTypeIndex: every message type has its place in MessageTypes as its
// index, found in its own slot of methodSlots (no type falls back to the
// search); aliases, tool names and unknown names have none; and the
// tables built from typeTable agree with it.
func TestTypeIndex(t *testing.T) {
	is := is.New(t)
	is.Equal(len(MessageTypes()), NumTypes)
	for i, typ := range MessageTypes() {
		got, ok := TypeIndex(typ)
		is.True(ok)
		is.Equal(got, i)
		e := methodSlots[internSlot(string(typ))]
		is.Equal(e.name, string(typ)) // the type has a slot of its own
		is.Equal(e.index, i)
		info, ok := infoOf(typ)
		is.True(ok)
		is.Equal(info.reply, typeTable[typ].reply)
		is.Equal(info.tool, typeTable[typ].tool)
		is.Equal(New(typ).Type(), typ)
	}
	for _, name := range []string{"", "STANDINGS_NOTIFICATION", MethodHandleGameInvitation, "receive_game_over", "ping", "GAME_OVE", "GAME_OVERX"} {
		_, ok := TypeIndex(MessageType(name))
		is.True(!ok) // not a message type as the spec spells it
		is.Equal(New(MessageType(name)), nil)
		is.Equal(ReplyType(MessageType(name)), MessageType(""))
		is.Equal(ToolName(MessageType(name)), name)
	}
}

// TestCheckByName: every message type's checks are called by name, so
// that validating it does not allocate its validator, and give what the
// interface call gives.
func TestCheckByName(t *testing.T) {
	is := is.New(t)
	for _, typ := range MessageTypes() {
		var byName, other validator
		is.True(checkByName(New(typ), &byName)) // named
		checkOther(New(typ), &other)
		is.Equal(byName.fields, other.fields)
	}
}
