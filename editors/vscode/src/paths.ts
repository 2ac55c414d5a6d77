/**
 * Workspace-relative paths of the server's answers ↔ file system paths of the editor.
 *
 * Snapshots name files relative to the workspace root (always with `/`); the editor knows the
 * active file's absolute path. The root is the active file's path without its `target_path`.
 */

function separatorOf(path: string): string {
  return path.includes("\\") && !path.includes("/") ? "\\" : "/";
}

function trimEnd(path: string, separator: string): string {
  return path.length > 1 && path.endsWith(separator) ? path.slice(0, -1) : path;
}

/**
 * The workspace root of `filePath`, given its workspace-relative `targetPath`; undefined
 * when the path does not end with it.
 */
export function workspaceRoot(filePath: string, targetPath: string): string | undefined {
  const separator = separatorOf(filePath);
  if (targetPath === "" || targetPath === ".") {
    return trimEnd(filePath, separator);
  }
  const relative = targetPath.split("/").join(separator);
  const suffix = separator + relative;
  const sameCase = filePath.endsWith(suffix);
  // Windows paths compare without case (drive letters especially).
  const foldedCase =
    separator === "\\" && filePath.toLowerCase().endsWith(suffix.toLowerCase());
  if (!sameCase && !foldedCase) {
    return undefined;
  }
  const root = filePath.slice(0, filePath.length - suffix.length);
  return root === "" ? separator : root;
}

export function isAbsolute(path: string): boolean {
  return path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith("\\\\");
}

/** The absolute path of a workspace-relative `path` (absolute paths are kept). */
export function resolvePath(root: string | undefined, path: string): string | undefined {
  if (isAbsolute(path)) {
    return path;
  }
  if (root === undefined) {
    return undefined;
  }
  const separator = separatorOf(root);
  const base = root.endsWith(separator) ? root : root + separator;
  return base + path.split("/").join(separator);
}
