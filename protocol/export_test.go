package protocol

// FastDecode runs the generated decoder alone on data: true when it took
// the input (v is then decoded), false when it left it to json (v is then
// as it was), or when v has no generated decoder.
func FastDecode(data []byte, v any) bool {
	return decodeGenerated(data, v)
}
