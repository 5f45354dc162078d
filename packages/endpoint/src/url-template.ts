import { BoundedCache } from "./bounded-cache.js";
import { encodeReserved, encodeUnreserved, takeCodePoints } from "./encoding.js";
import { isPlainObject, ownValue } from "./objects.js";

/** A url template parsed once: expand it with any number of variable sets. */
export interface UrlTemplate {
  /** Names of the variables the template's valid expressions use (`:name` included). */
  readonly variableNames: ReadonlySet<string>;
  /** The literal text before the first expression, as it appears in every expansion. */
  readonly literalPrefix: string;
  /** False when no expansion can contain `?` or `#` (no such literal, no `{?}`, `{&}`, `{#}`, `{+}`). */
  readonly mayContainQueryOrFragment: boolean;
  /**
   * RFC 6570 expansion. A variable is read from an own property of `variables`, or, when that is
   * missing or undefined, of `fallback` (so layered options need no merged copy). Never throws.
   */
  expand(variables: object, fallback?: object): string;
}

/** RFC 6570 section 3.2.1's table, one row per operator. */
interface Operator {
  readonly first: string;
  readonly separator: string;
  readonly named: boolean;
  readonly ifEmpty: string;
  readonly encode: (text: string) => string;
}

const row = (
  first: string,
  separator: string,
  named: boolean,
  ifEmpty: string,
  encode: (text: string) => string,
): Operator => ({ first, separator, named, ifEmpty, encode });

const OPERATORS: Readonly<Record<string, Operator>> = {
  "": row("", ",", false, "", encodeUnreserved),
  "+": row("", ",", false, "", encodeReserved),
  "#": row("#", ",", false, "", encodeReserved),
  ".": row(".", ".", false, "", encodeUnreserved),
  "/": row("/", "/", false, "", encodeUnreserved),
  ";": row(";", ";", true, "", encodeUnreserved),
  "?": row("?", "&", true, "=", encodeUnreserved),
  "&": row("&", "&", true, "=", encodeUnreserved),
};

interface VariableSpec {
  readonly name: string;
  /** Maximum code points for a `:n` prefix modifier, 0 when there is none. */
  readonly prefix: number;
  readonly explode: boolean;
}

interface Expression {
  readonly operator: Operator;
  readonly variables: readonly VariableSpec[];
  /** The expression as written, copied to the result when expansion finds it erroneous. */
  readonly raw: string;
  /** The variable's name when the expression is a plain `{name}` or `:name`, the usual case. */
  readonly simple: string | undefined;
}

// varname = varchar *( ["."] varchar ); varchar = ALPHA / DIGIT / "_" / pct-encoded
// prefix = ":" %x31-39 0*3DIGIT (1..9999); explode = "*"
const VARSPEC =
  /^((?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*)(?::([1-9][0-9]{0,3})|(\*))?$/;

// `:name` placeholders: a whole path segment.
const COLON_NAME = /[A-Za-z_][A-Za-z0-9_]*/y;

function parseExpression(body: string): Expression | undefined {
  const first = body.charAt(0);
  const operator =
    first !== "" && Object.hasOwn(OPERATORS, first) ? OPERATORS[first]! : OPERATORS[""]!;
  const list = operator === OPERATORS[""] ? body : body.slice(1);
  const variables: VariableSpec[] = [];
  for (const spec of list.split(",")) {
    const match = VARSPEC.exec(spec);
    if (match === null) return undefined;
    variables.push({
      name: match[1]!,
      prefix: match[2] === undefined ? 0 : Number(match[2]),
      explode: match[3] !== undefined,
    });
  }
  return { operator, variables, raw: `{${body}}`, simple: simpleName(operator, variables) };
}

function simpleName(operator: Operator, variables: VariableSpec[]): string | undefined {
  const [only] = variables;
  return operator === OPERATORS[""] &&
    variables.length === 1 &&
    only!.prefix === 0 &&
    !only!.explode
    ? only!.name
    : undefined;
}

function compile(template: string): UrlTemplate {
  const parts: (string | Expression)[] = [];
  const variableNames = new Set<string>();
  let literal = "";
  let start = 0;
  let inPath = true;
  const flushLiteral = (end: number): void => {
    literal += encodeReserved(template.slice(start, end));
  };
  const pushExpression = (expression: Expression): void => {
    if (literal !== "") parts.push(literal);
    literal = "";
    parts.push(expression);
    for (const variable of expression.variables) variableNames.add(variable.name);
  };

  for (let i = 0; i < template.length; i++) {
    const char = template[i];
    if (char === "{") {
      flushLiteral(i);
      const close = template.indexOf("}", i + 1);
      // Errors (RFC 6570 section 3): the unmatched text is copied as it is and processing goes on.
      if (close === -1) {
        literal += template.slice(i);
        start = i = template.length;
        break;
      }
      const expression = parseExpression(template.slice(i + 1, close));
      if (expression === undefined) literal += template.slice(i, close + 1);
      else pushExpression(expression);
      start = close + 1;
      i = close;
    } else if (char === "}") {
      flushLiteral(i);
      literal += "}";
      start = i + 1;
    } else if (char === "?" || char === "#") {
      inPath = false;
    } else if (char === ":" && inPath && template[i - 1] === "/") {
      COLON_NAME.lastIndex = i + 1;
      const name = COLON_NAME.exec(template)?.[0];
      const end = i + 1 + (name?.length ?? 0);
      const next = template[end];
      if (name !== undefined && (next === undefined || "/?#{".includes(next))) {
        flushLiteral(i);
        pushExpression({
          operator: OPERATORS[""]!,
          variables: [{ name, prefix: 0, explode: false }],
          raw: `:${name}`,
          simple: name,
        });
        start = end;
        i = end - 1;
      }
    }
  }
  flushLiteral(template.length);
  if (literal !== "") parts.push(literal);
  return new CompiledUrlTemplate(parts, variableNames);
}

function literalPrefix(parts: readonly (string | Expression)[]): string {
  return typeof parts[0] === "string" ? parts[0] : "";
}

function mayContainQueryOrFragment(parts: readonly (string | Expression)[]): boolean {
  return parts.some((part) =>
    typeof part === "string"
      ? part.includes("?") || part.includes("#")
      : part.operator.encode === encodeReserved || part.operator.named,
  );
}

class CompiledUrlTemplate implements UrlTemplate {
  readonly literalPrefix: string;
  readonly mayContainQueryOrFragment: boolean;

  constructor(
    private readonly parts: readonly (string | Expression)[],
    readonly variableNames: ReadonlySet<string>,
  ) {
    this.literalPrefix = literalPrefix(parts);
    this.mayContainQueryOrFragment = mayContainQueryOrFragment(parts);
  }

  expand(variables: object, fallback?: object): string {
    let url = "";
    for (const part of this.parts) {
      if (typeof part === "string") {
        url += part;
        continue;
      }
      // Fast path for `{name}` with a string or number, which is what most urls hold.
      if (part.simple !== undefined) {
        const value = lookup(variables, fallback, part.simple);
        if (typeof value === "string" || typeof value === "number") {
          url += encodeUnreserved(typeof value === "string" ? value : String(value));
          continue;
        }
      }
      url += expandExpression(part, variables, fallback) ?? part.raw;
    }
    return url;
  }
}

function lookup(variables: object, fallback: object | undefined, name: string): unknown {
  const value = ownValue(variables, name);
  return value !== undefined || fallback === undefined ? value : ownValue(fallback, name);
}

/** RFC 6570 Appendix A for one expression; undefined when the values make it erroneous. */
function expandExpression(
  expression: Expression,
  variables: object,
  fallback: object | undefined,
): string | undefined {
  const { operator } = expression;
  let out = "";
  let defined = false;
  for (const spec of expression.variables) {
    const value = lookup(variables, fallback, spec.name);
    if (value === undefined || value === null) continue;

    if (typeof value !== "object" || (!Array.isArray(value) && !isPlainObject(value))) {
      const text = spec.prefix === 0 ? String(value) : takeCodePoints(String(value), spec.prefix);
      out += defined ? operator.separator : operator.first;
      defined = true;
      if (operator.named) {
        out += text === "" ? spec.name + operator.ifEmpty : spec.name + "=" + operator.encode(text);
      } else {
        out += operator.encode(text);
      }
      continue;
    }

    const pairs = definedPairs(value);
    if (pairs.length === 0) continue; // empty lists and objects count as undefined
    // Prefix modifiers do not apply to composite values (RFC 6570 section 2.4.1).
    if (spec.prefix !== 0) return undefined;
    out += defined ? operator.separator : operator.first;
    defined = true;
    out += Array.isArray(value)
      ? expandList(operator, spec, pairs)
      : expandAssociative(operator, spec, pairs);
  }
  return out;
}

/** Defined members as [key, value] (key "" for list items), values already strings. */
function definedPairs(value: object): [string, string][] {
  const pairs: [string, string][] = [];
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) {
      if (item !== undefined && item !== null) pairs.push(["", String(item)]);
    }
  } else {
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key];
      if (item !== undefined && item !== null) pairs.push([key, String(item)]);
    }
  }
  return pairs;
}

function expandList(operator: Operator, spec: VariableSpec, items: [string, string][]): string {
  if (!spec.explode) {
    const joined = items.map(([, item]) => operator.encode(item)).join(",");
    return operator.named ? spec.name + "=" + joined : joined;
  }
  return items
    .map(([, item]) =>
      operator.named
        ? item === ""
          ? spec.name + operator.ifEmpty
          : spec.name + "=" + operator.encode(item)
        : operator.encode(item),
    )
    .join(operator.separator);
}

function expandAssociative(
  operator: Operator,
  spec: VariableSpec,
  pairs: [string, string][],
): string {
  if (!spec.explode) {
    const joined = pairs
      .map(([key, item]) => operator.encode(key) + "," + operator.encode(item))
      .join(",");
    return operator.named ? spec.name + "=" + joined : joined;
  }
  return pairs
    .map(([key, item]) =>
      operator.named && item === ""
        ? operator.encode(key) + operator.ifEmpty
        : operator.encode(key) + "=" + operator.encode(item),
    )
    .join(operator.separator);
}

const cache = new BoundedCache<UrlTemplate>(1000);

/**
 * Parses an RFC 6570 (levels 1-4) url template, plus `:name` path-segment placeholders, into a
 * reusable compiled form. Results are cached by template text, so a route used on every request
 * is parsed once.
 *
 * Invalid input never throws: an expression that does not match the grammar (from `{` to the next
 * `}`), an unclosed `{` (to the end) and a stray `}` are copied into the url as written, and the
 * rest of the template expands normally (RFC 6570 section 3). The same holds at expansion time for
 * a prefix modifier applied to a list or object.
 */
export function parseUrlTemplate(template: string): UrlTemplate {
  return cache.get(template) ?? cache.set(template, compile(template));
}
