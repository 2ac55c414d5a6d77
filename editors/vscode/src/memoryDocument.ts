/**
 * A memory as an editable text document, and back. Pure.
 *
 *     # memory mem_01… · project shop · version 3 · active
 *     # Save to store your edit (it is checked against version 3). Lines starting with # above
 *     # the --- line are ignored.
 *     title: Deploy checklist
 *     reference: docs/deploy.md
 *     retention: 2027-01-01T00:00:00Z
 *     ---
 *     The content, as is.
 *
 * `reference:` repeats, one per reference; `retention:` takes an RFC 3339 time, a duration
 * (`30d`, `720h`) or `none`. The content is everything after the `---` line; the document
 * ends with one newline the content does not have.
 */

import { who } from "./people";
import type { MemoryRecord } from "./protocol";

export const SEPARATOR = "---";

export interface MemoryFields {
  title: string;
  content: string;
  references: string[];
  /** As written (undefined: no retention line). */
  retention?: string;
}

/** What an edit sends: only the fields that differ from the record. */
export interface MemoryChanges {
  title?: string;
  content?: string;
  references?: string[];
  retention?: string;
}

export class MemoryDocumentError extends Error {}

function header(record: MemoryRecord): string[] {
  const where = record.scope === "project" ? `project ${record.scope_id}` : "user";
  const state = [record.status, record.expired ? "expired" : undefined, record.redacted ? "stored redacted" : undefined]
    .filter((part) => part !== undefined)
    .join(", ");
  return [
    `# memory ${record.id} · ${where} · version ${record.version} · ${state}`,
    `# updated ${record.updated_at} by ${who(record.updated_by, record.updated_by_person)}; created ${record.created_at} by ${who(record.created_by, record.created_by_person)}`,
    `# Save to store your edit (checked against version ${record.version}). Lines starting with # above the --- line are ignored.`,
  ];
}

export function renderMemory(record: MemoryRecord): string {
  return [
    ...header(record),
    `title: ${record.title}`,
    ...record.references.map((reference) => `reference: ${reference}`),
    `retention: ${record.retention_until ?? "none"}`,
    SEPARATOR,
    `${record.content}\n`,
  ].join("\n");
}

export function renderNewMemory(scope: string, workspaceId: string | undefined): string {
  const where = scope === "project" ? `project memory of workspace ${workspaceId ?? "?"}` : "user memory";
  return [
    `# new ${where}: write the title and the content, then save to create it.`,
    "# Optional: one `reference: PATH-OR-URL` line per reference, and `retention: 30d` (or an RFC 3339 time).",
    "# Secrets are refused; lines starting with # above the --- line are ignored.",
    "title: ",
    SEPARATOR,
    "",
  ].join("\n");
}

export function parseMemory(text: string): MemoryFields {
  const lines = text.split("\n");
  const separator = lines.findIndex((line) => line.trimEnd() === SEPARATOR);
  if (separator < 0) {
    throw new MemoryDocumentError(`no "${SEPARATOR}" line: put it between the fields and the content`);
  }
  let title: string | undefined;
  let retention: string | undefined;
  const references: string[] = [];
  for (const [index, raw] of lines.slice(0, separator).entries()) {
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "" || line.startsWith("#")) {
      continue;
    }
    const colon = line.indexOf(":");
    const key = colon < 0 ? line.trim() : line.slice(0, colon).trim();
    const value = colon < 0 ? "" : line.slice(colon + 1).trim();
    if (colon < 0) {
      throw new MemoryDocumentError(`line ${index + 1}: expected "field: value", got "${line}"`);
    }
    switch (key) {
      case "title":
        title = value;
        break;
      case "reference":
        if (value !== "") {
          references.push(value);
        }
        break;
      case "retention":
        retention = value;
        break;
      default:
        throw new MemoryDocumentError(`line ${index + 1}: unknown field "${key}"; use title, reference or retention`);
    }
  }
  if (title === undefined || title === "") {
    throw new MemoryDocumentError('the title is empty: write it after "title:"');
  }
  let content = lines.slice(separator + 1).join("\n");
  if (content.endsWith("\n")) {
    content = content.slice(0, -1);
  }
  return { title, content, references, retention: retention === "" ? undefined : retention };
}

function sameReferences(a: string[], b: string[]): boolean {
  const sorted = (list: string[]) => [...new Set(list.map((item) => item.trim()))].sort();
  return JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
}

/** The fields of `fields` that differ from `record` (the server normalises references). */
export function changesOf(record: MemoryRecord, fields: MemoryFields): MemoryChanges {
  const changes: MemoryChanges = {};
  if (fields.title !== record.title) {
    changes.title = fields.title;
  }
  if (fields.content !== record.content) {
    changes.content = fields.content;
  }
  if (!sameReferences(fields.references, record.references)) {
    changes.references = fields.references;
  }
  const retention = fields.retention ?? "none";
  if (retention !== (record.retention_until ?? "none")) {
    changes.retention = retention;
  }
  return changes;
}
