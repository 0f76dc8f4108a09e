// Package prcommand is the language of `/shardgate` commands in pull-request
// comments: which lines of a comment hold a command (as GitHub renders the
// markdown) and what each command says. It runs nothing.
package prcommand

import (
	"fmt"
	"strings"
)

// Prefix starts every shardgate command in a PR comment.
const Prefix = "/shardgate"

// Command verbs.
const (
	CmdPlan   = "plan"
	CmdAttest = "attest"
	CmdHelp   = "help"
	CmdApply  = "apply"
	CmdDrift  = "drift"
	CmdCancel = "cancel"
)

// Command is one parsed `/shardgate ...` line.
type Command struct {
	Verb string
	// StreamPrefix is the stream of `attest quiesce <stream_prefix>`.
	StreamPrefix string
	// Project is the project of `apply <project>` ("" for `apply`, the retry
	// of the failed applies).
	Project string
}

// CommandError is a line that starts with /shardgate but is not a command; the
// reply quotes Reason.
type CommandError struct{ Reason string }

func (e *CommandError) Error() string { return e.Reason }

// HelpText answers `/shardgate help` and malformed commands.
const HelpText = "shardgate commands (one per line, as plain text in a new comment on the pull request; commands in code, quotes or HTML are not read):\n\n" +
	"- `/shardgate plan`: plan the head commit again\n" +
	"- `/shardgate attest quiesce <stream_prefix>`: approvers only; the producers of the stream are paused and their retries drained (valid for the head commit at the time of your comment, for a limited time; an edit of your comment by anyone else revokes it)\n" +
	"- `/shardgate apply`: approvers only; retry a failed apply after merge\n" +
	"- `/shardgate apply <project>`: approvers only; after merge, apply a project that waits for it (`apply: manual` in `.shardgate.yaml`), or retry its failed apply\n" +
	"- `/shardgate drift`: check the default branch's projects for drift now (live shard counts against the code); the result goes to each project's drift issue\n" +
	"- `/shardgate cancel`: the pull request's author or an approver; stop this pull request's queued and running plans (terraform is interrupted and releases its state lock); applies are not cancelled this way\n" +
	"- `/shardgate help`: this text\n"

// Parse finds the shardgate commands in a comment body: lines whose
// first word is /shardgate, in paragraphs of top-level text. The body is read
// as GitHub renders it (CommonMark with GFM): code (fenced, indented, inline),
// block quotes, lists, headings, tables, HTML comments and raw HTML never hold
// a command, so quoting someone's command does not run it again and a command
// nobody can see does not run at all. It returns the commands, and an error
// for the first malformed one.
func Parse(body string) ([]Command, error) {
	var cmds []Command
	for _, line := range commandLines([]byte(body)) {
		fields := strings.Fields(strings.TrimSuffix(line, "\r"))
		if len(fields) == 0 || fields[0] != Prefix {
			continue
		}
		if strings.Contains(line, formatted) {
			return cmds, &CommandError{Reason: "write `/shardgate` commands as plain text: code, links, HTML and formatting in a command line are not read"}
		}
		cmd, err := parseCommand(fields[1:])
		if err != nil {
			return cmds, err
		}
		cmds = append(cmds, cmd)
	}
	return cmds, nil
}

func parseCommand(args []string) (Command, error) {
	if len(args) == 0 {
		return Command{}, &CommandError{Reason: "`/shardgate` needs a command"}
	}
	switch verb := strings.ToLower(args[0]); verb {
	case CmdApply:
		switch {
		case len(args) == 1:
			return Command{Verb: CmdApply}, nil
		case len(args) > 2:
			return Command{}, &CommandError{Reason: "use `/shardgate apply` or `/shardgate apply <project>`"}
		case !validProject(args[1]):
			return Command{}, &CommandError{Reason: fmt.Sprintf("%q is not a project name", args[1])}
		}
		return Command{Verb: CmdApply, Project: args[1]}, nil
	case CmdPlan, CmdHelp, CmdDrift, CmdCancel:
		if len(args) > 1 {
			return Command{}, &CommandError{Reason: fmt.Sprintf("`/shardgate %s` takes no arguments", verb)}
		}
		return Command{Verb: verb}, nil
	case CmdAttest:
		if len(args) != 3 || strings.ToLower(args[1]) != "quiesce" {
			return Command{}, &CommandError{Reason: "use `/shardgate attest quiesce <stream_prefix>`"}
		}
		prefix := args[2]
		if !validStreamPrefix(prefix) {
			return Command{}, &CommandError{Reason: fmt.Sprintf("%q is not a stream prefix", prefix)}
		}
		return Command{Verb: CmdAttest, StreamPrefix: prefix}, nil
	default:
		return Command{}, &CommandError{Reason: fmt.Sprintf("unknown command %q", args[0])}
	}
}

// validProject accepts a project name as .shardgate.yaml may spell one (a
// directory path when the file lists none), without markup or path tricks.
func validProject(s string) bool {
	if s == "" || len(s) > 200 || strings.Contains("/"+s+"/", "/../") {
		return false
	}
	for _, r := range s {
		if r < 0x21 || r > 0x7e || strings.ContainsRune("{}\\?#%`<>\"'|[]()*", r) {
			return false
		}
	}
	return true
}

// validStreamPrefix accepts what the coordinator accepts in a path segment
// without escaping: no braces (hash tags are the coordinator's), no slashes.
func validStreamPrefix(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for _, r := range s {
		if r < 0x21 || r > 0x7e || strings.ContainsRune("{}/\\?#%`<>\"'", r) {
			return false
		}
	}
	return true
}
