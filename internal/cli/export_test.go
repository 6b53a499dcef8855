package cli

// ExtractTar is extractTar, for the tests of what a hostile archive can
// reach.
var ExtractTar = extractTar
