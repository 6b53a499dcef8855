package cli

// ExtractTar is extractTar, for the tests of what a hostile archive can
// reach.
var ExtractTar = extractTar

// TerminalPage is terminalPage, for the tests of serve --terminal.
var TerminalPage = terminalPage
