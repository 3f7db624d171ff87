package convert

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// Page chrome left out of a page's knowledge: menus, footers, forms and
// anything that is not text.
var pageChrome = []string{"script", "style", "noscript", "template", "nav", "footer", "header", "aside",
	"form", "button", "svg", "canvas", "iframe", "select"}

// FromHTML converts an HTML page to Markdown (github.com/JohannesKaufmann/
// html-to-markdown/v2 with its table plugin); relative links are made
// absolute against base when given.
func FromHTML(data []byte, base string) (string, error) {
	doc, err := parseHTML(data)
	if err != nil {
		return "", err
	}
	md, err := htmlConverter().ConvertNode(doc, converter.WithDomain(base))
	if err != nil {
		return "", fmt.Errorf("html: %w", err)
	}
	return collapse(string(md)), nil
}

// Title is a page's <title>, "" without one.
func Title(data []byte) string {
	doc, err := parseHTML(data)
	if err != nil {
		return ""
	}
	var find func(*html.Node) string
	find = func(n *html.Node) string {
		if n.Type == html.ElementNode && n.Data == "title" && n.FirstChild != nil {
			return strings.Join(strings.Fields(n.FirstChild.Data), " ")
		}
		if n.Type == html.ElementNode && n.Data == "body" {
			return ""
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if t := find(c); t != "" {
				return t
			}
		}
		return ""
	}
	return find(doc)
}

// parseHTML reads UTF-8, or the charset the page declares.
func parseHTML(data []byte) (*html.Node, error) {
	var r = bytes.NewReader(data)
	if !utf8.Valid(data) {
		cr, err := charset.NewReader(r, "text/html")
		if err != nil {
			return nil, fmt.Errorf("%w: unknown character set", ErrUnsupported)
		}
		return html.Parse(cr)
	}
	return html.Parse(r)
}

func htmlConverter() *converter.Converter {
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(table.WithSkipEmptyRows(true), table.WithHeaderPromotion(true),
			table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal)),
	))
	for _, tag := range pageChrome {
		conv.Register.TagType(tag, converter.TagTypeRemove, converter.PriorityStandard)
	}
	return conv
}
