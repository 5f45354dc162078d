import { parseUrlTemplate, type UrlTemplate } from "../url-template.js";
import { BoundedCache } from "./bounded-cache.js";
import { isAbsoluteUrl } from "./is-absolute-url.js";

/** What parse() needs to know about a url, worked out once per url. */
export interface TemplatePlan {
  readonly template: UrlTemplate;
  /** Keys that are neither query parameters nor body keys: option keys and placeholders. */
  readonly consumed: ReadonlySet<string>;
  /** Whether a placeholder is named like an option key (`{url}`), which must not expand. */
  readonly namesOptionKey: boolean;
  /** Whether every expansion is an absolute url (true), a relative one (false), or it depends. */
  readonly absolute: boolean | undefined;
}

const cache = new BoundedCache<TemplatePlan>(1000);

function plan(url: string, optionKeys: ReadonlySet<string>): TemplatePlan {
  const template = parseUrlTemplate(url);
  const names = [...template.variableNames];
  const prefix = template.literalPrefix;
  return {
    template,
    consumed: new Set([...optionKeys, ...names]),
    namesOptionKey: names.some((name) => optionKeys.has(name)),
    absolute: isAbsoluteUrl(prefix) ? true : prefix.startsWith("/") ? false : undefined,
  };
}

/** The plan for a url, cached: expanded urls are then never re-scanned for their shape. */
export function templatePlan(url: string, optionKeys: ReadonlySet<string>): TemplatePlan {
  return cache.get(url) ?? cache.set(url, plan(url, optionKeys));
}
