--- Pure formatting of agent-profile answers (docs/reference/profiles.md): one agent's view
--- (`{ agent, sources = { { path, why, truncation } } }`) as the instruction float's lines, and
--- every agent's view (`{ profiles = { … } }`) as one column per agent for the side-by-side.
---
--- No editor state is read here: each function takes the decoded answer and returns lines,
--- which line opens which file, and highlights, so lua/rutter/agents.lua stays thin.
local M = {}

--- The agents a profile exists for, in the server's order, and their names in prose.
M.AGENTS = { "codex", "claude", "gemini", "copilot", "cursor" }
M.NAMES = {
  codex = "Codex",
  claude = "Claude Code",
  gemini = "Gemini CLI",
  copilot = "Copilot",
  cursor = "Cursor",
  default = "rutter (default)",
}

M.COLUMNS_FOOTER = "<CR> open file · R reload · q close tab"

local function str(value)
  if value == nil or value == vim.NIL then
    return ""
  end
  return tostring(value)
end

local function list(value)
  if type(value) == "table" and (next(value) == nil or value[1] ~= nil) then
    return value
  end
  return {}
end

--- The agent's name in prose ("Claude Code"), or the value itself for an unknown one.
function M.name(agent)
  return M.NAMES[agent] or str(agent)
end

--- Where `agent` cuts a source, as one phrase, or nil when it keeps all of it.
--- @param truncation table? `{ byte, line, lost_bytes }`
--- @return string?
function M.cut_text(truncation)
  if type(truncation) ~= "table" then
    return nil
  end
  return string.format(
    "✂ cut at line %s (byte %s): %s bytes lost",
    str(truncation.line),
    str(truncation.byte),
    str(truncation.lost_bytes)
  )
end

--- The float's content for one agent's view (the error branch stays rutter.format's).
--- @param result table `{ agent, sources }`
--- @param opts? { target?: string }
--- @return string[] lines
--- @return table<integer, string> rows line → workspace-relative path `<CR>` opens
--- @return table<integer, string> hl line → highlight group
function M.view_lines(result, opts)
  opts = opts or {}
  local lines, rows, hl = {}, {}, {}
  local function add(text, path, group)
    lines[#lines + 1] = text
    if path and path ~= "" then
      rows[#lines] = path
    end
    if group then
      hl[#lines] = group
    end
  end
  local agent = M.name(result.agent)
  local sources = list(result.sources)
  add(string.format("rutter · %s · as %s", str(opts.target), agent), nil, "Title")
  if #sources == 0 then
    add(agent .. " loads no instruction file for this file.")
  else
    local cut = 0
    for _, source in ipairs(sources) do
      if type(source.truncation) == "table" then
        cut = cut + 1
      end
    end
    local text = string.format(
      "%d %s %s loads, in its order",
      #sources,
      #sources == 1 and "source" or "sources",
      agent
    )
    if cut > 0 then
      text = text .. string.format("; %d cut", cut)
    end
    add(text)
    add("")
    add("#  path", nil, "Comment")
    local width = #tostring(#sources)
    local indent = string.rep(" ", width + 2)
    for index, source in ipairs(sources) do
      local path = str(source.path)
      add(string.format("%" .. width .. "d  %s", index, path), path)
      local phrase = M.cut_text(source.truncation)
      if phrase then
        add(indent .. phrase, path, "WarningMsg")
      end
      add(indent .. "why: " .. str(source.why), path, "Comment")
    end
  end
  return lines, rows, hl
end

--- The key a path is compared by: the path itself, or what `identity` makes of it (the file's
--- real path, so that a link and the file it leads to count as one file).
--- @param identity (fun(path: string): string?)?
--- @param path string
--- @return string
local function key_of(identity, path)
  return identity and identity(path) or path
end

--- Which agents load each file: key → set of agents (a view that failed is left out). Files
--- are told apart by `identity` when given (see `key_of`), else by path.
--- @param profiles table[]
--- @param identity (fun(path: string): string?)?
--- @return table<string, table<string, boolean>>
function M.loaders(profiles, identity)
  local by_key = {}
  for _, view in ipairs(list(profiles)) do
    for _, source in ipairs(list(view.sources)) do
      local key = key_of(identity, str(source.path))
      by_key[key] = by_key[key] or {}
      by_key[key][str(view.agent)] = true
    end
  end
  return by_key
end

--- How a path loaded by some agents and not others is marked: "≠ only X, Y" when at most half
--- of the agents load it, else "≠ not X"; nil when every agent loads it.
--- @param agents string[] the agents shown, in order
--- @param loaded table<string, boolean>
--- @return string?
function M.difference(agents, loaded)
  local yes, no = {}, {}
  for _, agent in ipairs(agents) do
    if loaded[agent] then
      yes[#yes + 1] = M.name(agent)
    else
      no[#no + 1] = M.name(agent)
    end
  end
  if #no == 0 then
    return nil
  end
  if #yes <= #no then
    return "≠ only " .. table.concat(yes, ", ")
  end
  return "≠ not " .. table.concat(no, ", ")
end

--- One column per agent for `{ profiles = { … } }`; an entry `{ agent, error }` (that agent's
--- view failed closed) shows the error, and is left out of the comparison. `identity` (a path
--- → the file's real path) compares files rather than names: `CLAUDE.md -> AGENTS.md` loaded
--- by one agent and `AGENTS.md` by another are the same text, and marked so.
--- @param result table
--- @param identity (fun(path: string): string?)?
--- @return { agent: string, lines: string[], rows: table<integer, string>, hl: table<integer, string> }[]
function M.columns(result, identity)
  local profiles = list(result.profiles)
  local agents = {}
  for _, view in ipairs(profiles) do
    if type(view.error) ~= "table" then
      agents[#agents + 1] = str(view.agent)
    end
  end
  local by_key = M.loaders(profiles, identity)
  --- Another name the same file is loaded under by some agent (for "same file as …").
  local names = {}
  for _, view in ipairs(profiles) do
    for _, source in ipairs(list(view.sources)) do
      local path = str(source.path)
      local key = key_of(identity, path)
      names[key] = names[key] or {}
      names[key][path] = true
    end
  end
  local columns = {}
  for _, view in ipairs(profiles) do
    local lines, rows, hl = {}, {}, {}
    local function add(text, path, group)
      lines[#lines + 1] = text
      if path and path ~= "" then
        rows[#lines] = path
      end
      if group then
        hl[#lines] = group
      end
    end
    local sources = list(view.sources)
    local err = type(view.error) == "table" and view.error or nil
    add(M.name(view.agent), nil, "Title")
    if err then
      add("failed closed: a file it would read cannot be read safely", nil, "ErrorMsg")
      add("")
      add("error    " .. str(err.code), nil, "ErrorMsg")
      if str(err.path) ~= "" then
        add("path     " .. str(err.path), str(err.path))
      end
      add("message  " .. str(err.message))
    else
      add(string.format("%d %s", #sources, #sources == 1 and "source" or "sources"), nil, "Comment")
      add("")
    end
    if #sources == 0 and not err then
      add("(loads nothing)", nil, "Comment")
    end
    for index, source in ipairs(sources) do
      local path = str(source.path)
      add(string.format("%d  %s", index, path), path)
      local phrase = M.cut_text(source.truncation)
      if phrase then
        add("   " .. phrase, path, "WarningMsg")
      end
      local key = key_of(identity, path)
      local others = {}
      for name in pairs(names[key] or {}) do
        if name ~= path then
          others[#others + 1] = name
        end
      end
      if #others > 0 then
        table.sort(others)
        add("   = same file as " .. table.concat(others, ", "), path, "Comment")
      end
      local differs = M.difference(agents, by_key[key] or {})
      if differs then
        add("   " .. differs, path, "DiagnosticHint")
      end
    end
    add("")
    add(M.COLUMNS_FOOTER, nil, "Comment")
    columns[#columns + 1] = { agent = str(view.agent), lines = lines, rows = rows, hl = hl }
  end
  return columns
end

return M
