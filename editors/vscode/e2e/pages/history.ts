/**
 * The history search box and the pages it opens, as a person uses them: the ONE place that
 * knows a hit's row (`KIND ID`, described by `vN`) and a page's tab (`KIND ID vN · page P of
 * N`).
 */

export const SEARCH_COMMAND = "Rutter: Search History…";
export const TITLE = "rutter: Search History";

export function hitLabel(kind: string, id: string): string {
  return `${kind} ${id}`;
}

export function pageTab(kind: string, id: string, version: number, page: number, pages: number): string {
  return `${kind} ${id} v${version} · page ${page} of ${pages}`;
}
