package githubtest

import (
	"encoding/json"
	"sort"
	"strconv"
)

func listComments(s *Server, c *call) reply {
	r, number, found := s.issueNumberOf(c)
	if !found {
		return notFound()
	}
	out := []any{}
	for _, id := range sortedKeys(r.comments) {
		if cm := r.comments[id]; cm.Issue == number {
			out = append(out, s.commentJSON(r, cm))
		}
	}
	return paginate(c, out)
}

type commentBody struct {
	Body string `json:"body"`
}

func createComment(s *Server, c *call) reply {
	r, number, found := s.issueNumberOf(c)
	if !found {
		return notFound()
	}
	var in commentBody
	if err := json.Unmarshal(c.body, &in); err != nil || in.Body == "" {
		return unprocessable("body is required")
	}
	if len([]rune(in.Body)) > maxCommentRunes {
		return unprocessable("Body is too long (maximum is 65536 characters)")
	}
	return created(s.commentJSON(r, s.addComment(r, number, s.botLogin, in.Body)))
}

// maxCommentRunes is GitHub's limit on a comment body.
const maxCommentRunes = 65536

func getComment(s *Server, c *call) reply {
	r, cm, found := s.commentOf(c)
	if !found {
		return notFound()
	}
	return ok(s.commentJSON(r, cm))
}

func editComment(s *Server, c *call) reply {
	r, cm, found := s.commentOf(c)
	if !found {
		return notFound()
	}
	var in commentBody
	if err := json.Unmarshal(c.body, &in); err != nil || in.Body == "" {
		return unprocessable("body is required")
	}
	if len([]rune(in.Body)) > maxCommentRunes {
		return unprocessable("Body is too long (maximum is 65536 characters)")
	}
	// An installation can only edit the comments its bot wrote.
	if cm.User != s.botLogin {
		return reply{status: 403, body: errorBody("Resource not accessible by integration")}
	}
	cm.Body, cm.UpdatedAt = in.Body, s.now().UTC()
	return ok(s.commentJSON(r, cm))
}

func deleteComment(s *Server, c *call) reply {
	r, cm, found := s.commentOf(c)
	if !found {
		return notFound()
	}
	delete(r.comments, cm.ID)
	delete(r.reactions, cm.ID)
	return noContent()
}

func listReactions(s *Server, c *call) reply {
	r, cm, found := s.commentOf(c)
	if !found {
		return notFound()
	}
	out := []any{}
	content := c.r.URL.Query().Get("content")
	for _, re := range r.reactions[cm.ID] {
		if content == "" || re.Content == content {
			out = append(out, s.reactionJSON(re))
		}
	}
	return paginate(c, out)
}

func createReaction(s *Server, c *call) reply {
	r, cm, found := s.commentOf(c)
	if !found {
		return notFound()
	}
	var in struct {
		Content string `json:"content"`
	}
	_ = json.Unmarshal(c.body, &in) // the spec already checked the enum
	for _, re := range r.reactions[cm.ID] {
		if re.User == s.botLogin && re.Content == in.Content {
			return ok(s.reactionJSON(re)) // GitHub answers 200 for an existing reaction
		}
	}
	re := &Reaction{ID: s.id(), CommentID: cm.ID, User: s.botLogin, Content: in.Content}
	r.reactions[cm.ID] = append(r.reactions[cm.ID], re)
	return created(s.reactionJSON(re))
}

func deleteReaction(s *Server, c *call) reply {
	r, cm, found := s.commentOf(c)
	if !found {
		return notFound()
	}
	id, _ := strconv.ParseInt(c.params["reaction_id"], 10, 64)
	kept := r.reactions[cm.ID][:0:0]
	for _, re := range r.reactions[cm.ID] {
		if re.ID != id {
			kept = append(kept, re)
		}
	}
	r.reactions[cm.ID] = kept
	return noContent()
}

func listEvents(s *Server, c *call) reply {
	r, pr, found := s.issueOf(c)
	if !found {
		return notFound()
	}
	events := append([]*IssueEvent(nil), r.events[pr.Number]...)
	sort.SliceStable(events, func(i, j int) bool { return events[i].ID < events[j].ID })
	out := []any{}
	for _, e := range events {
		out = append(out, s.eventJSON(r, e))
	}
	return paginate(c, out)
}
