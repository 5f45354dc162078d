import { bold, clip, code, link, num, obj, quote, str, text } from "./sender-markdown.js";

/** What a GitHub delivery becomes: one markdown message, or nothing (`ignored` names it). */
export type GitHubOutcome = { kind: "post"; content: string } | { kind: "ignored"; name: string };

/** Commits listed for a push; the rest are counted ("and N more"). */
export const PUSH_COMMITS_SHOWN = 5;
/** Characters of a comment (or review) quoted in its message. */
export const COMMENT_CHARACTERS = 500;

type Payload = Record<string, unknown>;
type Formatter = (payload: Payload) => string | undefined;

const repoLink = (payload: Payload) => {
  const repo = obj(payload.repository);
  return link(str(repo.full_name) ?? "a repository", repo.html_url);
};
const actor = (payload: Payload) => bold(str(obj(payload.sender).login) ?? "someone");

/** `refs/heads/main` → `main`; `refs/tags/v1` → `tag v1`. */
function refName(ref: string): { name: string; kind: "branch" | "tag" } {
  if (ref.startsWith("refs/tags/")) return { name: ref.slice(10), kind: "tag" };
  return { name: ref.startsWith("refs/heads/") ? ref.slice(11) : ref, kind: "branch" };
}

function push(payload: Payload): string {
  const { name, kind } = refName(str(payload.ref) ?? "");
  const repo = obj(payload.repository);
  const who = bold(str(obj(payload.pusher).name) ?? str(obj(payload.sender).login) ?? "someone");
  const where = `${kind} ${link(name, `${str(repo.html_url) ?? ""}/tree/${name}`)}`;
  if (payload.deleted === true) return `${who} deleted ${where} in ${repoLink(payload)}`;
  const commits = Array.isArray(payload.commits) ? payload.commits.map(obj) : [];
  const count = commits.length;
  const noun = count === 1 ? "commit" : "commits";
  const head =
    count === 0
      ? `${who} pushed to ${where} in ${repoLink(payload)}`
      : `${who} pushed ${link(`${count} ${noun}`, payload.compare)} to ${where} in ${repoLink(payload)}`;
  const lines = commits.slice(0, PUSH_COMMITS_SHOWN).map((commit) => {
    const sha = (str(commit.id) ?? "").slice(0, 7);
    const firstLine = (str(commit.message) ?? "").split("\n")[0] ?? "";
    const author = obj(commit.author);
    const by = str(author.username) ?? str(author.name);
    return `- ${link(sha, commit.url)} ${text(firstLine, 120)}${by ? ` (${text(by)})` : ""}`;
  });
  if (count > PUSH_COMMITS_SHOWN) lines.push(`- and ${count - PUSH_COMMITS_SHOWN} more`);
  return [head, ...lines].join("\n");
}

function numbered(kind: string, item: Record<string, unknown>): string {
  const number = num(item.number);
  const title = str(item.title) ?? "";
  return `${kind} ${link(`#${number ?? "?"} ${clip(title)}`, item.html_url)}`;
}

function pullRequest(payload: Payload): string | undefined {
  const pr = obj(payload.pull_request);
  const verb = {
    opened: "opened",
    reopened: "reopened",
    ready_for_review: "marked ready for review",
    closed: pr.merged === true ? "merged" : "closed",
  }[String(payload.action)];
  if (!verb) return undefined;
  return `${actor(payload)} ${verb} ${numbered("pull request", pr)} in ${repoLink(payload)}`;
}

function pullRequestReview(payload: Payload): string | undefined {
  if (payload.action !== "submitted") return undefined;
  const review = obj(payload.review);
  const verb =
    { approved: "approved", changes_requested: "requested changes on" }[
      String(review.state).toLowerCase()
    ] ?? "reviewed";
  const pr = {
    ...obj(payload.pull_request),
    html_url: review.html_url ?? obj(payload.pull_request).html_url,
  };
  const head = `${actor(payload)} ${verb} ${numbered("pull request", pr)} in ${repoLink(payload)}`;
  const body = str(review.body);
  return body ? `${head}\n${quote(body, COMMENT_CHARACTERS)}` : head;
}

function issues(payload: Payload): string | undefined {
  const verb = { opened: "opened", closed: "closed", reopened: "reopened" }[String(payload.action)];
  if (!verb) return undefined;
  return `${actor(payload)} ${verb} ${numbered("issue", obj(payload.issue))} in ${repoLink(payload)}`;
}

function issueComment(payload: Payload): string | undefined {
  if (payload.action !== "created") return undefined;
  const issue = obj(payload.issue);
  const comment = obj(payload.comment);
  const kind = issue.pull_request ? "pull request" : "issue";
  const on = numbered(kind, { ...issue, html_url: comment.html_url ?? issue.html_url });
  const head = `${actor(payload)} commented on ${on} in ${repoLink(payload)}`;
  const body = str(comment.body);
  return body ? `${head}\n${quote(body, COMMENT_CHARACTERS)}` : head;
}

function release(payload: Payload): string | undefined {
  if (payload.action !== "published") return undefined;
  const rel = obj(payload.release);
  const name = str(rel.name) ?? str(rel.tag_name) ?? "a release";
  const pre = rel.prerelease === true ? "pre-release" : "release";
  return `${actor(payload)} published ${pre} ${link(name, rel.html_url)} in ${repoLink(payload)}`;
}

function workflowRun(payload: Payload): string | undefined {
  if (payload.action !== "completed") return undefined;
  const run = obj(payload.workflow_run);
  const name = str(run.name) ?? str(obj(payload.workflow).name) ?? "workflow";
  const number = num(run.run_number);
  const conclusion = str(run.conclusion) ?? "completed";
  const branch = str(run.head_branch);
  return (
    `Workflow ${link(`${name}${number === undefined ? "" : ` #${number}`}`, run.html_url)} ` +
    `${bold(conclusion)}${branch ? ` on ${code(branch)}` : ""} in ${repoLink(payload)}`
  );
}

function refChange(verb: "created" | "deleted"): Formatter {
  return (payload) => {
    const kind = str(payload.ref_type) ?? "ref";
    const ref = str(payload.ref) ?? "";
    const repo = obj(payload.repository);
    const shown =
      verb === "created" && kind !== "repository"
        ? link(ref, `${str(repo.html_url) ?? ""}/tree/${ref}`)
        : code(ref);
    return `${actor(payload)} ${verb} ${text(kind)} ${shown} in ${repoLink(payload)}`;
  };
}

function star(payload: Payload): string | undefined {
  if (payload.action !== "created") return undefined;
  const stars = num(obj(payload.repository).stargazers_count);
  const count = stars === undefined ? "" : ` (${stars} ${stars === 1 ? "star" : "stars"})`;
  return `${actor(payload)} starred ${repoLink(payload)}${count}`;
}

function fork(payload: Payload): string {
  const forkee = obj(payload.forkee);
  return `${actor(payload)} forked ${repoLink(payload)} to ${link(str(forkee.full_name) ?? "a fork", forkee.html_url)}`;
}

/** The events Parley posts (DESIGN section 6), each with the actions it posts. */
const FORMATTERS: Record<string, Formatter> = {
  push,
  pull_request: pullRequest,
  pull_request_review: pullRequestReview,
  issues,
  issue_comment: issueComment,
  release,
  workflow_run: workflowRun,
  create: refChange("created"),
  delete: refChange("deleted"),
  star,
  fork,
};

/**
 * One GitHub delivery (its `X-GitHub-Event` and parsed payload) as one markdown message, or
 * `ignored` with `<event>.<action>` (or `<event>` when it has no action) for any other event or
 * action. `ping` is handled by the route before this.
 */
export function githubMessage(event: string, payload: Payload): GitHubOutcome {
  const action = str(payload.action);
  const content = FORMATTERS[event]?.(payload);
  if (content === undefined)
    return { kind: "ignored", name: action ? `${event}.${action}` : event };
  return { kind: "post", content };
}
