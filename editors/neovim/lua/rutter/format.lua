--- Pure formatting of a `rutter/effectiveInstructions` answer into the float's lines (an
--- agent's view, `{ agent, sources }`, goes to rutter.agents_format).
---
--- No editor state is read here: `lines(result, opts)` takes the decoded answer (a
--- `project_instruction_snapshot.v1` table, or `{ error = { code, message, path?, details? } }`
--- with the typed error of a failed request, see `rutter.request`) and returns the lines, which
--- line opens which file, and a highlight group per line.
local M = {}

M.FOOTER = "<CR> open file · R refresh · a agent · q close"

local function str(value)
  if value == nil or value == vim.NIL then
    return ""
  end
  return tostring(value)
end

local function is_list(value)
  return type(value) == "table" and (next(value) == nil or value[1] ~= nil)
end

local function list(value)
  if is_list(value) then
    return value
  end
  return {}
end

local function pad_right(text, width)
  local gap = width - vim.fn.strdisplaywidth(text)
  return gap > 0 and text .. string.rep(" ", gap) or text
end

local function pad_left(text, width)
  local gap = width - vim.fn.strdisplaywidth(text)
  return gap > 0 and string.rep(" ", gap) .. text or text
end

local function plural(count, one, many)
  return string.format("%d %s", count, count == 1 and one or many)
end

--- Why an ignored entry is not delivered, as one phrase.
--- @param entry table
--- @return string
function M.ignored_reason(entry)
  local reason = str(entry.reason)
  if reason == "superseded" then
    return string.format(
      "superseded by %s (a non-blank AGENTS.override.md replaces AGENTS.md at its level)",
      str(entry.superseded_by)
    )
  elseif reason == "ignore_file" then
    return string.format(
      "ignored by .prayu/instructions.ignore:%s (pattern %s)",
      str(entry.line),
      str(entry.pattern)
    )
  elseif reason == "blank_override" then
    return "blank override: skipped, the level falls back to AGENTS.md"
  elseif reason == "alias" then
    return string.format(
      "alias of %s (%s; not delivered twice)",
      str(entry.alias_of),
      entry.link_stub == true and "a git link stub naming it" or "a link to it"
    )
  end
  return reason
end

local function redaction_text(redactions)
  local parts = {}
  for _, item in ipairs(list(redactions)) do
    table.insert(parts, string.format("%s x%s", str(item.kind), str(item.count)))
  end
  return table.concat(parts, ", ")
end

local function details_text(details)
  if type(details) ~= "table" then
    return nil
  end
  local keys = vim.tbl_keys(details)
  table.sort(keys)
  local parts = {}
  for _, key in ipairs(keys) do
    local value = details[key]
    if type(value) == "table" then
      value = vim.json.encode(value)
    end
    table.insert(parts, string.format("%s=%s", key, str(value)))
  end
  if #parts == 0 then
    return nil
  end
  return table.concat(parts, " ")
end

--- @class rutter.format.Opts
--- @field target? string what the float is about when the answer has no `target_path`
--- @field agent? string the agent whose view was asked for (its failure is worded as such)
--- @field footer? boolean append the key help line (default true)

--- The float's content for one answer.
--- @param result table the decoded answer (snapshot or `{ error = … }`)
--- @param opts? rutter.format.Opts
--- @return string[] lines
--- @return table<integer, string> row_to_path 1-based line number → path (workspace-relative,
---   or absolute for errors outside every workspace) that `<CR>` on that line opens
--- @return table<integer, string> highlights 1-based line number → highlight group
function M.lines(result, opts)
  opts = opts or {}
  if type(result) == "table" and result.error == nil and type(result.agent) == "string" then
    local agents_format = require("rutter.agents_format")
    local lines, rows, hl = agents_format.view_lines(result, { target = opts.target, footer = false })
    if opts.footer ~= false then
      lines[#lines + 1] = ""
      lines[#lines + 1] = M.FOOTER
      hl[#lines] = "Comment"
    end
    return lines, rows, hl
  end
  local lines, rows, hl = {}, {}, {}
  local function add(text, path, group)
    table.insert(lines, text)
    if path ~= nil and path ~= "" then
      rows[#lines] = path
    end
    if group then
      hl[#lines] = group
    end
  end

  if type(result) ~= "table" then
    add("rutter · " .. str(opts.target), nil, "Title")
    add("")
    add("no answer from the server", nil, "ErrorMsg")
  elseif type(result.error) == "table" then
    local err = result.error
    add("rutter · " .. str(opts.target), nil, "Title")
    add("")
    if opts.agent then
      -- An agent's view (rutter.agents): a file that agent would read fails the checks.
      local name = require("rutter.agents_format").name(opts.agent)
      add(name .. "'s view failed closed: a file it would read cannot be read safely.", nil, "ErrorMsg")
    else
      add("Discovery failed closed: no instructions are delivered for this file.", nil, "ErrorMsg")
    end
    add("")
    add("  error    " .. str(err.code), nil, "ErrorMsg")
    if str(err.path) ~= "" then
      add("  path     " .. str(err.path), str(err.path))
    end
    add("  message  " .. str(err.message))
    local details = details_text(err.details)
    if details then
      add("  details  " .. details)
    end
  else
    local target = str(result.target_path)
    if target == "" then
      target = str(opts.target)
    end
    local sources = list(result.sources)
    add(string.format("rutter · %s (workspace %s)", target, str(result.workspace_id)), target, "Title")
    if #sources == 0 then
      add("No instruction file applies to this file.")
    else
      add(
        plural(#sources, "source", "sources")
          .. " in delivery order; a higher precedence wins where they conflict"
      )
    end

    if #sources > 0 then
      add("")
      local w_ord, w_prec, w_kind = 1, 4, 4
      for _, source in ipairs(sources) do
        w_ord = math.max(w_ord, #str(source.ordinal))
        w_prec = math.max(w_prec, #str(source.precedence))
        w_kind = math.max(w_kind, #str(source.kind))
      end
      add(
        string.format(
          "%s  %s  %s  %s",
          pad_left("#", w_ord),
          pad_left("prec", w_prec),
          pad_right("kind", w_kind),
          "path"
        ),
        nil,
        "Comment"
      )
      local indent = string.rep(" ", w_ord + 2)
      for _, source in ipairs(sources) do
        local path = str(source.path)
        local row = string.format(
          "%s  %s  %s  %s",
          pad_left(str(source.ordinal), w_ord),
          pad_left(str(source.precedence), w_prec),
          pad_right(str(source.kind), w_kind),
          path
        )
        if str(source.link_target) ~= "" then
          -- A link inside the workspace (docs/reference/discovery.md): where its content comes from.
          local arrow = source.link_stub == true and "  stub → " or "  → "
          row = row .. arrow .. str(source.link_target)
        end
        if source.redacted == true then
          row = row .. "  [redacted]"
        end
        add(row, path)
        add(indent .. "why: " .. str(source.why_effective), path, "Comment")
      end
    end

    local conflicts = list(result.conflicts)
    if #conflicts > 0 then
      add("")
      add(string.format("Conflicts (%d)", #conflicts), nil, "Title")
      for _, conflict in ipairs(conflicts) do
        add(
          string.format(
            "  %s: %s < %s",
            str(conflict.role),
            str(conflict.lower_precedence_path),
            str(conflict.higher_precedence_path)
          )
        )
        add("    " .. str(conflict.resolution), nil, "Comment")
      end
    end

    local ignored = list(result.ignored)
    if #ignored > 0 then
      add("")
      add(string.format("Ignored (%d)", #ignored), nil, "Title")
      for _, entry in ipairs(ignored) do
        add(string.format("  %s — %s", str(entry.path), M.ignored_reason(entry)), str(entry.path))
      end
    end

    local redacted = {}
    for _, source in ipairs(sources) do
      if #list(source.redactions) > 0 then
        table.insert(redacted, source)
      end
    end
    if #redacted > 0 then
      add("")
      add(string.format("Redactions (%d)", #redacted), nil, "Title")
      for _, source in ipairs(redacted) do
        add(
          string.format(
            "  %s — %s: removed before any agent sees it",
            str(source.path),
            redaction_text(source.redactions)
          ),
          str(source.path)
        )
      end
    end

    add("")
    add("Fingerprint " .. str(result.fingerprint), nil, "Comment")
  end

  if opts.footer ~= false then
    add("")
    add(M.FOOTER, nil, "Comment")
  end
  return lines, rows, hl
end

return M
