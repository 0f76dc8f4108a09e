// Package bot is shardgate's GitHub App: the event handlers and the
// orchestration of plans, reports and applies they call.
package bot
