package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// maxToolCalls bounds the calls one answer may ask for.
const maxToolCalls = 64

// Bounds on a streamed answer: a model that streams without end (a test
// model sent 60 KB chunks and drove agentd to 5.8 GB in 20 s) fails with
// ErrAnswerTooLarge instead, and what is held stays small.
const (
	// MaxStreamBytes bounds the bytes read of one streamed answer, as
	// maxAnswer does for a whole JSON one.
	MaxStreamBytes = maxAnswer
	// MaxStreamLine bounds one line of the event stream (one data: line
	// or the data of one event).
	MaxStreamLine = 1 << 20
	// MaxAnswerText bounds an answer's text and tool-call arguments
	// together (bytes).
	MaxAnswerText = 1 << 20
	// MaxAnswerChunks bounds the events of one answer: a model streams
	// about one token per event, so this bounds its tokens whatever
	// max_tokens it was asked for.
	MaxAnswerChunks = 32 << 10
)

// ErrAnswerTooLarge is a streamed answer past one of the bounds above.
var ErrAnswerTooLarge = errors.New("answer too large")

// limitedReader fails with ErrAnswerTooLarge past n bytes.
type limitedReader struct {
	r io.Reader
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("%w: over %d bytes streamed (llm.MaxStreamBytes)", ErrAnswerTooLarge, MaxStreamBytes)
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (u *wireUsage) usage() Usage {
	if u == nil {
		return Usage{}
	}
	return Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
}

type wireError struct {
	Message string `json:"message"`
}

type chunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    *int         `json:"index"`
				ID       string       `json:"id"`
				Function wireFunction `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
	Error *wireError `json:"error"`
}

// ErrIncomplete is a stream that ended before [DONE] and before any
// finish reason: the connection dropped mid-answer.
var ErrIncomplete = errors.New("stream ended before the answer was complete")

// ParseStream reads an OpenAI chat-completion event stream (data: lines,
// then data: [DONE]) into the whole answer, giving each piece of text to
// onDelta as it comes. Tool-call arguments streamed in pieces are joined
// by their index. Only the first choice counts. An error event, malformed
// JSON, or an end without [DONE] and without a finish reason is an error;
// so is an answer past a bound (MaxStreamBytes, MaxStreamLine,
// MaxAnswerText, MaxAnswerChunks): ErrAnswerTooLarge.
func ParseStream(r io.Reader, onDelta func(string)) (Response, error) {
	sc := bufio.NewScanner(&limitedReader{r: r, n: MaxStreamBytes})
	sc.Buffer(make([]byte, 0, 64<<10), MaxStreamLine)
	var out Response
	var content strings.Builder
	calls := map[int]*ToolCall{}
	var data []byte
	done := false
	text, chunks := 0, 0 // answer bytes, events
	flush := func() error {
		if len(data) == 0 {
			return nil
		}
		defer func() { data = data[:0] }()
		if bytes.Equal(bytes.TrimSpace(data), []byte("[DONE]")) {
			done = true
			return nil
		}
		if chunks++; chunks > MaxAnswerChunks {
			return fmt.Errorf("%w: over %d events (llm.MaxAnswerChunks)", ErrAnswerTooLarge, MaxAnswerChunks)
		}
		var c chunk
		if err := json.Unmarshal(data, &c); err != nil {
			return fmt.Errorf("malformed stream chunk: %w", err)
		}
		if c.Error != nil {
			return fmt.Errorf("model service error: %s", c.Error.Message)
		}
		if c.Usage != nil {
			out.Usage = c.Usage.usage()
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue
			}
			if d := ch.Delta.Content; d != nil && *d != "" {
				if text += len(*d); text > MaxAnswerText {
					return errTextTooLarge
				}
				content.WriteString(*d)
				if onDelta != nil {
					onDelta(*d)
				}
			}
			for _, tc := range ch.Delta.ToolCalls {
				i := len(calls)
				if tc.Index != nil {
					i = *tc.Index
				} else if tc.ID == "" && len(calls) > 0 {
					i = len(calls) - 1 // a continuation without an index
				}
				if i < 0 || i >= maxToolCalls {
					return fmt.Errorf("tool call index %d out of range", i)
				}
				call := calls[i]
				if call == nil {
					call = &ToolCall{}
					calls[i] = call
				}
				if tc.ID != "" {
					call.ID = tc.ID
				}
				if text += len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments); text > MaxAnswerText {
					return errTextTooLarge
				}
				call.Name += tc.Function.Name
				call.Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				out.FinishReason = *ch.FinishReason
			}
		}
		return nil
	}
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if err := flush(); err != nil {
				return Response{}, err
			}
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(line[5:], []byte(" "))
			if len(data) > 0 {
				data = append(data, '\n')
			}
			if len(data)+len(v) > MaxStreamLine {
				return Response{}, fmt.Errorf("%w: an event over %d bytes (llm.MaxStreamLine)", ErrAnswerTooLarge, MaxStreamLine)
			}
			data = append(data, v...)
		case line[0] == ':': // a comment (keep-alive)
		default: // event:, id:, retry: carry nothing we use
		}
		if done {
			break
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return Response{}, fmt.Errorf("%w: a line over %d bytes (llm.MaxStreamLine)", ErrAnswerTooLarge, MaxStreamLine)
	} else if err != nil {
		return Response{}, err
	}
	if err := flush(); err != nil {
		return Response{}, err
	}
	if !done && out.FinishReason == "" {
		return Response{}, ErrIncomplete
	}
	out.Content = content.String()
	out.ToolCalls = sortedCalls(calls)
	return out, nil
}

var errTextTooLarge = fmt.Errorf("%w: over %d bytes of text and arguments (llm.MaxAnswerText)", ErrAnswerTooLarge, MaxAnswerText)

func sortedCalls(m map[int]*ToolCall) []ToolCall {
	idx := make([]int, 0, len(m))
	for i := range m {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]ToolCall, 0, len(idx))
	for _, i := range idx {
		out = append(out, *m[i])
	}
	return out
}

// ParseCompletion reads a whole (non-streamed) chat completion.
func ParseCompletion(r io.Reader) (Response, error) {
	var c struct {
		Choices []struct {
			Message struct {
				Content   *string        `json:"content"`
				ToolCalls []wireToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage *wireUsage `json:"usage"`
		Error *wireError `json:"error"`
	}
	if err := json.NewDecoder(r).Decode(&c); err != nil {
		return Response{}, fmt.Errorf("malformed completion: %w", err)
	}
	if c.Error != nil {
		return Response{}, fmt.Errorf("model service error: %s", c.Error.Message)
	}
	if len(c.Choices) == 0 {
		return Response{}, errors.New("completion without choices")
	}
	ch := c.Choices[0]
	out := Response{FinishReason: ch.FinishReason, Usage: c.Usage.usage()}
	if ch.Message.Content != nil {
		out.Content = *ch.Message.Content
	}
	for _, tc := range ch.Message.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return out, nil
}

// MaxArguments bounds a tool call's arguments (64 KB).
const MaxArguments = 64 << 10

// ParseArguments reads a tool call's arguments: a JSON object (empty text
// is {}), at most MaxArguments bytes. Models sometimes write broken JSON;
// the error goes back to the model as the tool's result.
func ParseArguments(s string) (map[string]any, error) {
	if len(s) > MaxArguments {
		return nil, fmt.Errorf("arguments longer than %d bytes", MaxArguments)
	}
	if strings.TrimSpace(s) == "" {
		return map[string]any{}, nil
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("arguments are not a JSON object: %v", err)
	}
	if m == nil {
		return nil, errors.New("arguments must be a JSON object, not null")
	}
	if dec.More() {
		return nil, errors.New("arguments hold more than one JSON value")
	}
	return m, nil
}
