package parser

// Input is the untrusted byte stream handed to the parser.
type Input struct {
	data []byte
	pos  int
}
