package errs

// JSONKind names a Go kind the way a JSON user thinks of it, for the
// messages of a value of the wrong type ("must be an object").
func JSONKind(k string) string {
	switch k {
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	}
	return "of another type"
}
