import { describe, expect, it } from "vitest";
import {
  renderMessage,
  renderWithoutCache,
  type ContentFormat,
} from "../../../../src/chat/rendering/render-message.js";
import { sanitizeHtml } from "../../../../src/chat/rendering/sanitize-html.js";

const LIMIT = 16_384;

/** `unit` repeated to fill `bytes`, between `prefix` and `suffix`. */
function fill(bytes: number, unit: string, prefix = "", suffix = ""): string {
  const room = bytes - Buffer.byteLength(prefix + suffix);
  return prefix + unit.repeat(Math.floor(room / Buffer.byteLength(unit))) + suffix;
}

function nest(bytes: number, open: string, close: string, inner = "x"): string {
  const depth = Math.floor((bytes - inner.length) / (open.length + close.length));
  return open.repeat(depth) + inner + close.repeat(depth);
}

type Generator = (bytes: number) => string;

/** Inputs known to make markdown, sanitizing or plain-text conversion slow or deep, by size. */
const CORPUS: [string, ContentFormat, Generator][] = [
  ["a one-column table", "markdown", (n) => fill(n, "|1\n", "|a|\n|-|\n")],
  ["a two-column table", "markdown", (n) => fill(n, "|1|2|\n", "|a|b|\n|-|-|\n")],
  [
    "a wide table",
    "markdown",
    (n) => {
      const columns = Math.floor((n - 6) / 6);
      return `${"|a".repeat(columns)}|\n${"|-".repeat(columns)}|\n${"|1".repeat(columns)}|`;
    },
  ],
  ["an HTML table", "html", (n) => fill(n, "<tr><td>1</td></tr>", "<table>", "</table>")],
  ["unclosed nested <b>", "html", (n) => fill(n, "<b>", "", "x")],
  ["closed nested <b>", "html", (n) => nest(n, "<b>", "</b>")],
  ["nested HTML lists", "html", (n) => nest(n, "<ul><li>", "</li></ul>")],
  ["unclosed HTML lists", "html", (n) => fill(n, "<ul><li>")],
  ["nested blockquotes", "html", (n) => nest(n, "<blockquote>", "</blockquote>")],
  ["nested markdown quotes", "markdown", (n) => fill(n, ">", "", " x")],
  [
    "nested markdown lists",
    "markdown",
    (n) => {
      const lines: string[] = [];
      for (let i = 0, size = 0; size < n; i++) {
        const line = " ".repeat((i % 60) * 2) + "- x";
        size += line.length + 1;
        if (size <= n) lines.push(line);
      }
      return lines.join("\n");
    },
  ],
  ["list items", "markdown", (n) => fill(n, "- a\n")],
  ["nested emphasis", "markdown", (n) => fill(n, "*a _b ")],
  ["unclosed links", "markdown", (n) => fill(n, "[a](http://x/")],
  ["unclosed link labels", "markdown", (n) => fill(n, "[")],
  ["link labels and parentheses", "markdown", (n) => fill(n, "[a](")],
  ["reference links", "markdown", (n) => fill(n, "[a][b]")],
  ["autolinks", "markdown", (n) => fill(n, "http://a.b ")],
  ["autolinks without spaces", "markdown", (n) => fill(n, "http://a.b/")],
  ["angle autolinks", "markdown", (n) => fill(n, "<http://a")],
  ["code spans", "markdown", (n) => fill(n, "`a")],
  ["entities", "html", (n) => fill(n, "&#52;")],
  ["images", "markdown", (n) => fill(n, "![a](http://x/a.png)")],
  ["line breaks", "markdown", (n) => fill(n, "a\n")],
  ["HTML links", "html", (n) => fill(n, '<a href="http://x">a</a>')],
];

/** What a 16 KB message of ordinary chat looks like. */
const PROSE = fill(
  LIMIT,
  "Deploy **done**, see [the run](https://ci.example.com/run/81) and `make test`.\n\n",
);

function render(input: string, format: ContentFormat): void {
  renderWithoutCache(format === "html" ? sanitizeHtml(input) : input, format);
}

/** CPU time this process has used, in ms (not the wall clock: time spent waiting for a core is not the input's). */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * The least of seven runs of each piece of work, run in turns, in CPU time: what each costs,
 * without the noise of a shared machine (a run preempted by other work would count the time it
 * waited; a long run is preempted more often than a short one, which skewed the wall clock's
 * ratios against large inputs under load).
 */
function bestOf7InTurns(...pieces: Array<() => void>): number[] {
  const best = pieces.map(() => Infinity);
  for (let i = 0; i < 7; i++) {
    pieces.forEach((piece, n) => {
      const started = cpuMs();
      piece();
      best[n] = Math.min(best[n]!, cpuMs() - started);
    });
  }
  return best;
}

// The budget. Absolute times mean little on a machine shared with other work, so the bound is
// relative: no 16 KB input may cost more than RELATIVE_BUDGET times ordinary 16 KB prose, both
// measured in turns so that a burst of load hits both alike
// (itself about 10 ms on an idle core), and an input sixteen times larger may not cost more than
// GROWTH_BUDGET times as much (linear is 16, quadratic 256: a 5,400-row table took over 0.4 s
// before). The wide gaps keep the test steady on a busy machine (at eight times larger and a
// budget of 24, a loaded two-core machine once measured 29). Below a few milliseconds the timer's
// grain and fixed costs dominate, so the small input counts as at least 2 ms, or a fifth of 16 KB
// of prose measured in the same turns when the machine is slowed by other work (which slows the
// large input alike: the fixed 2 ms floor alone failed linear inputs under a load of 14).
const RELATIVE_BUDGET = 30;
const GROWTH_FACTOR = 16;
const GROWTH_BUDGET = 64;

describe("rendering bounds", () => {
  it.each(CORPUS)("renders %s of 16 KB without throwing, within budget", (_name, format, make) => {
    const input = make(LIMIT);
    expect(Buffer.byteLength(input)).toBeLessThanOrEqual(LIMIT);
    expect(Buffer.byteLength(input)).toBeGreaterThan(LIMIT - 100);
    render(input, format);
    render(PROSE, "markdown");
    const [prose = 0, cost = 0] = bestOf7InTurns(
      () => render(PROSE, "markdown"),
      () => render(input, format),
    );
    expect(cost, `${cost.toFixed(1)} ms against ${prose.toFixed(1)} ms`).toBeLessThan(
      RELATIVE_BUDGET * Math.max(prose, 2),
    );
  });

  it.each(CORPUS)("grows about linearly with the size of %s", (_name, format, make) => {
    const small = make(LIMIT / GROWTH_FACTOR);
    const large = make(LIMIT);
    render(small, format);
    render(PROSE, "markdown");
    const [smallCost = 0, largeCost = 0, prose = 0] = bestOf7InTurns(
      () => render(small, format),
      () => render(large, format),
      () => render(PROSE, "markdown"),
    );
    expect(
      largeCost,
      `${largeCost.toFixed(1)} ms against ${smallCost.toFixed(1)} ms (prose ${prose.toFixed(1)} ms)`,
    ).toBeLessThan(GROWTH_BUDGET * Math.max(smallCost, 2, prose / 5));
  });

  it("keeps the text of content nested deeper than it keeps tags", () => {
    const deep = "<b>".repeat(500) + "4111 1111 1111 1111" + "</b>".repeat(500);
    expect(renderMessage(sanitizeHtml(deep), "html").text).toBe("4111 1111 1111 1111");
  });

  it("renders a table as one line per row", () => {
    expect(renderMessage("|a|b|\n|-|-|\n|1|2|", "markdown").text).toBe("a | b\n1 | 2");
  });
});
