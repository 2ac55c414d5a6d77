--- `:RutterHistory [query]`: search memories and the current run's history (notes, messages,
--- tool receipts, summaries, checkpoints) through the server's `rutter/historySearch`, pick a
--- hit (`vim.ui.select`, kind `rutter_history`, so a telescope / fzf-lua ui.select override
--- shows its own picker), and read it through `rutter/historyRead` in a read-only scratch
--- buffer, page by page (docs/reference/history.md).
---
--- What is searched: the current buffer's workspace (its project memories and your user
--- memories) and, when the plugin knows the workspace's current run (the one chosen for the
--- session commands, or its only active run), that run's lineage. A buffer in no served
--- workspace searches your user memories only.
---
--- The picker lists the hits found so far, then "more…" while the server has a next page (its
--- opaque cursor). A hit's reader re-checks the hit on every page: a changed source is
--- `conflict`, a deleted, disabled, expired or invisible one `gone`; either empties the buffer
--- of the source's text and says so. Keys in the reader: `]p` next page, `[p` previous page,
--- `R` read the page again, `q` close.
---
--- Every outcome fires `User RutterHistory` (data: `action` = "search" | "read", `result`,
--- `error`).
local M = {}

local api = vim.api
local session = require("rutter.session")
local ui = require("rutter.ui")

M.SEARCH = "rutter/historySearch"
M.READ = "rutter/historyRead"
M.MORE = "more…"
local SNIPPET_WIDTH = 80

M.last_error = nil --- @type string? the last error shown (for statuslines and tests)

local function fire(data)
  api.nvim_exec_autocmds("User", { pattern = "RutterHistory", modeline = false, data = data })
end

local function str(value)
  if value == nil or value == vim.NIL then
    return ""
  end
  return tostring(value)
end

--- A hit as one picker line: source kind, ID, version and the snippet on one line.
--- @param hit table `{ handle, source_kind, source_id, version, snippet }`
--- @return string
function M.label(hit)
  if hit.more then
    return M.MORE
  end
  local snippet = vim.trim((str(hit.snippet):gsub("%s+", " ")))
  if vim.fn.strchars(snippet) > SNIPPET_WIDTH then
    snippet = vim.fn.strcharpart(snippet, 0, SNIPPET_WIDTH - 1) .. "…"
  end
  return string.format("%-10s %s v%s  %s", str(hit.source_kind), str(hit.source_id), str(hit.version), snippet)
end

local function error_text(what, err)
  local e = session.error_of(err)
  return string.format("%s: %s [%s]", what, str(e.message), str(e.code)), e
end

local function show_error(what, err)
  local text, e = error_text(what, err)
  M.last_error = text
  ui.notify(text, vim.log.levels.ERROR)
  return text, e
end

-- -- the reader --------------------------------------------------------------------------------

--- @class rutter.HistoryReader
--- @field buf integer
--- @field client_id integer
--- @field hit table
--- @field page integer
--- @field pages? integer
--- @field error? table the typed error of the last read (no text shown)
local readers = {} --- @type table<integer, rutter.HistoryReader> by buffer

local function winbar(reader)
  local hit = reader.hit
  local where = string.format("%s %s v%s", str(hit.source_kind), str(hit.source_id), str(hit.version))
  if reader.error then
    return string.format(" rutter history · %s · %s · q close ", where, str(reader.error.code))
  end
  return string.format(
    " rutter history · %s · page %d of %s · ]p next · [p previous · q close ",
    where,
    reader.page,
    str(reader.pages)
  )
end

local function paint(reader, lines)
  local buf = reader.buf
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.wo[win].winbar = winbar(reader)
    api.nvim_win_set_cursor(win, { 1, 0 })
  end
end

--- Read page `page` of the reader's hit and show it (or, on a failure, the error and no text).
local function read(reader, page)
  local client = vim.lsp.get_client_by_id(reader.client_id)
  if not client then
    return ui.notify("the rutter language server has stopped", vim.log.levels.ERROR)
  end
  session.call(client, M.READ, { handle = reader.hit.handle, page = page }, function(err, result)
    if not api.nvim_buf_is_valid(reader.buf) then
      return
    end
    if err then
      local text, e = show_error("cannot read this hit", err)
      reader.error = e
      local lines = { text }
      if e.code == "conflict" or e.code == "gone" then
        lines[#lines + 1] = ""
        lines[#lines + 1] = "No text is shown. Search again (:RutterHistory) for what is there now."
      end
      paint(reader, lines)
      fire({ action = "read", error = text, code = e.code, buf = reader.buf })
      return
    end
    M.last_error = nil
    reader.error = nil
    reader.page = tonumber(result.page) or page
    reader.pages = tonumber(result.pages)
    paint(reader, vim.split(str(result.text), "\n", { plain = true }))
    fire({ action = "read", result = result, buf = reader.buf })
  end)
end

local function turn(buf, delta)
  local reader = readers[buf]
  if not reader then
    return
  end
  local page = reader.page + delta
  if page < 1 or (reader.pages and page > reader.pages) then
    ui.notify(string.format("no page %d: this hit has %s", page, reader.pages == 1 and "1 page" or (str(reader.pages) .. " pages")))
    return
  end
  read(reader, page)
end

--- Open `hit` (a search hit) in its read-only scratch buffer, at page 1, in a split below;
--- the buffer keeps the search's workspace, so `:RutterHistory` from it searches the same one.
function M.open(client, hit, workspace_id)
  local name = "rutter://history/" .. str(hit.source_kind) .. "/" .. str(hit.source_id)
  local existing = vim.fn.bufnr("^" .. vim.fn.escape(name, "\\/.*$^~[]") .. "$")
  local buf = existing
  if buf <= 0 then
    buf = api.nvim_create_buf(false, true)
    vim.bo[buf].bufhidden = "wipe"
    vim.bo[buf].swapfile = false
    pcall(api.nvim_buf_set_name, buf, name)
    vim.bo[buf].modifiable = false
    local function map(lhs, fn, desc)
      vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true, desc = "rutter: " .. desc })
    end
    map("]p", function()
      turn(buf, 1)
    end, "next history page")
    map("[p", function()
      turn(buf, -1)
    end, "previous history page")
    map("R", function()
      turn(buf, 0)
    end, "read the history page again")
    map("q", "<Cmd>close<CR>", "close")
    api.nvim_create_autocmd("BufWipeout", {
      buffer = buf,
      once = true,
      callback = function()
        readers[buf] = nil
      end,
    })
  end
  vim.b[buf].rutter_workspace_id = workspace_id
  local reader = { buf = buf, client_id = client.id, hit = hit, page = 1 }
  readers[buf] = reader
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd("belowright split")
    win = api.nvim_get_current_win()
    api.nvim_win_set_buf(win, buf)
  else
    api.nvim_set_current_win(win)
  end
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  read(reader, 1)
  return buf
end

-- -- the search and its picker -------------------------------------------------------------------

--- The run whose history to search in `workspace_id`: the current run when one was chosen,
--- else the workspace's only active run, else none. `callback(run_id?)`.
local function known_run(client, workspace_id, callback)
  if not workspace_id then
    return callback(nil)
  end
  local current = session.current(workspace_id)
  if current then
    return callback(current)
  end
  session.call(client, "rutter/runs", { workspace_id = workspace_id }, function(err, result)
    local runs = not err and type(result) == "table" and result.runs or {}
    callback(#runs == 1 and type(runs[1].run_id) == "string" and runs[1].run_id or nil)
  end)
end

local function pick(search)
  local items = vim.list_extend({}, search.hits)
  if search.next_cursor then
    items[#items + 1] = { more = true }
  end
  if #items == 0 then
    ui.notify(string.format("no history hit for %q in %s", search.query, search.scope_text))
    return
  end
  vim.ui.select(items, {
    prompt = string.format("rutter history %q (%s): ", search.query, search.scope_text),
    kind = "rutter_history",
    format_item = M.label,
  }, function(item)
    if not item then
      return
    end
    vim.schedule(function()
      if item.more then
        M.page(search)
      else
        local client = vim.lsp.get_client_by_id(search.client_id)
        if client then
          M.open(client, item, search.workspace_id)
        end
      end
    end)
  end)
end

--- Ask for the search's next page (its cursor) and show the picker with every hit so far.
function M.page(search)
  local client = vim.lsp.get_client_by_id(search.client_id)
  if not client then
    return ui.notify("the rutter language server has stopped", vim.log.levels.ERROR)
  end
  local params = { query = search.query, workspace_id = search.workspace_id, run_id = search.run_id, cursor = search.next_cursor }
  if search.run_id then
    params.workspace_id = nil
  end
  session.call(client, M.SEARCH, params, function(err, result)
    if err then
      fire({ action = "search", error = (show_error("no history search", err)) })
      return
    end
    M.last_error = nil
    for _, hit in ipairs(type(result) == "table" and result.hits or {}) do
      search.hits[#search.hits + 1] = hit
    end
    local next_cursor = type(result) == "table" and result.next_cursor or nil
    search.next_cursor = type(next_cursor) == "string" and next_cursor or nil
    search.pages = search.pages + 1
    fire({ action = "search", result = result, query = search.query, run_id = search.run_id, workspace_id = search.workspace_id })
    pick(search)
  end)
end

--- `:RutterHistory [query]`: search (the query is asked when missing) and pick a hit.
--- @param query? string
function M.search(query)
  local client = session.client()
  if not client then
    ui.notify("no rutter language server is running; open a file of a project first", vim.log.levels.WARN)
    return
  end
  local bufnr = api.nvim_get_current_buf()
  local function go(text)
    text = vim.trim(text or "")
    if text == "" then
      ui.notify("no search: a history search needs a query")
      return
    end
    session.workspace_of(client, bufnr, function(workspace_id)
      known_run(client, workspace_id, function(run_id)
        local scope_text = "your user memories only: this buffer is in no served workspace"
        if run_id then
          scope_text = "run " .. run_id
        elseif workspace_id then
          scope_text = "workspace " .. workspace_id .. ", memories only"
        end
        M.page({
          client_id = client.id,
          query = text,
          workspace_id = workspace_id,
          run_id = run_id,
          scope_text = scope_text,
          hits = {},
          pages = 0,
        })
      end)
    end)
  end
  if query and vim.trim(query) ~= "" then
    return go(query)
  end
  vim.ui.input({ prompt = "History search: " }, function(text)
    vim.schedule(function()
      go(text)
    end)
  end)
end

--- The reader of `buf` (for tests and scripts): `{ hit, page, pages, error }`, or nil.
function M.reader(buf)
  local reader = readers[buf or api.nvim_get_current_buf()]
  return reader and vim.deepcopy({ hit = reader.hit, page = reader.page, pages = reader.pages, error = reader.error })
end

function M.init()
  api.nvim_create_user_command("RutterHistory", function(opts)
    M.search(opts.args ~= "" and opts.args or nil)
  end, { nargs = "*", desc = "rutter: search memories and the current run's history, and read a hit" })
end

return M
