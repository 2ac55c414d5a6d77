--- `:RutterMemory`: explicit user and project memory, kept by the rutter language server.
---
--- The float lists the user's memories and the project memories of the current buffer's
--- workspace, disabled and expired ones included (marked). Keys in the float:
---   a  add a project memory (a user memory when the buffer is in no served workspace)
---   A  add a user memory
---   e  edit the memory on the cursor's line (also <CR>)
---   d  disable it, or enable it again
---   D  delete it permanently (the server asks for confirmation first; Neovim shows the
---      question through `vim.ui.select`)
---   R  reload, q close
---
--- Adding and editing happen in a scratch buffer (`rutter://memory/...`): the title on the
--- first line, a blank line, then the content. `:w` sends it to the server. An edit names the
--- version it was opened at: if the memory changed meanwhile (another editor, the CLI), the
--- server refuses and the conflict is shown as an error; the buffer keeps your text.
---
--- Every outcome fires `User RutterMemory` with data `{ action, id?, version?, result?,
--- error? }` (action: "list", "create", "edit", "status", "delete").
local M = {}

local api = vim.api
local ui = require("rutter.ui")

M.LIST = "rutter/memory/list"
M.CREATE = "rutter/memory/create"
M.EDIT = "rutter/memory/edit"
M.SET_STATUS = "rutter/memory/setStatus"
M.DELETE = "rutter/memory/delete"

local ns = api.nvim_create_namespace("rutter.memory")
local FOOTER = "a add · A add user · e edit · d disable/enable · D delete · R reload · q close"

--- The open list float, if any.
--- @class rutter.MemoryFloat
--- @field win integer
--- @field buf integer
--- @field client_id integer
--- @field uri? string the buffer the list was opened from (its workspace is the project)
--- @field workspace_id? string that buffer's workspace, as the server serves it
--- @field source_win integer
--- @field rows table<integer, table> line → memory record
--- @field lines string[]
--- @field result? table
local state = nil --- @type rutter.MemoryFloat?

--- Scratch buffers being edited, by buffer number.
--- @class rutter.MemoryDraft
--- @field client_id integer
--- @field id? string nil until a new memory is first written
--- @field version? integer the version the buffer was opened at (or last saved as)
--- @field scope "user"|"project"
--- @field uri? string for project scope: a URI inside the workspace
--- @field trailing_newline boolean the content ended with a newline
local drafts = {} --- @type table<integer, rutter.MemoryDraft>

M.last_error = nil --- @type string? the last error shown (for statuslines and tests)

local function notify(message, level)
  ui.notify(message, level)
end

local function fire(data)
  api.nvim_exec_autocmds("User", { pattern = "RutterMemory", modeline = false, data = data })
end

--- The message of a failed request: the typed error's when the server sent one.
local function error_text(err)
  local e = ui.error_of(err)
  return string.format("%s [%s]", e.message or "failed", e.code)
end

local function show_error(what, err)
  local text = what .. ": " .. error_text(err)
  M.last_error = text
  notify(text, vim.log.levels.ERROR)
  return text
end

local call = ui.request

-- -- the list ----------------------------------------------------------------------------------

local function status_of(item)
  if item.status == "disabled" then
    return "disabled"
  end
  return item.expired and "expired" or "active"
end

local function scope_of(item)
  return item.scope == "user" and "user" or ("project:" .. (item.scope_id or "?"))
end

--- Lines for a `rutter/memory/list` answer.
--- @param result table `{ items, has_more }` or `{ error }`
--- @param workspace_id? string the workspace whose project memory is shown
--- @return string[] lines, table<integer, table> rows (line → memory), table<integer, string> hl
function M.format(result, workspace_id)
  local lines, rows, hl = {}, {}, {}
  local where = workspace_id and ("user memory and project memory of workspace " .. workspace_id)
    or "all memory"
  lines[1] = "rutter · " .. where
  hl[1] = "Title"
  if type(result) ~= "table" or result.error then
    local err = type(result) == "table" and result.error or {}
    lines[#lines + 1] = ""
    lines[#lines + 1] = string.format("error[%s]: %s", err.code or "unknown", err.message or "no answer")
    hl[#lines] = "ErrorMsg"
  else
    local items = result.items or {}
    if #items == 0 then
      lines[#lines + 1] = "No memories yet: press a to add one."
    else
      lines[#lines + 1] = string.format(
        "%d memor%s, newest change first%s",
        #items,
        #items == 1 and "y" or "ies",
        result.has_more and " (more exist: narrow the scope)" or ""
      )
      lines[#lines + 1] = ""
      local width = 5
      for _, item in ipairs(items) do
        width = math.max(width, vim.fn.strdisplaywidth(scope_of(item)))
      end
      lines[#lines + 1] = string.format("%-" .. width .. "s  %-8s  %3s  %s", "scope", "status", "v", "title")
      hl[#lines] = "Comment"
      for _, item in ipairs(items) do
        local title = (item.title or ""):gsub("\t", " ")
        if item.redacted then
          title = title .. "  [redacted]"
        end
        lines[#lines + 1] = string.format(
          "%-" .. width .. "s  %-8s  %3d  %s",
          scope_of(item),
          status_of(item),
          item.version or 0,
          title
        )
        rows[#lines] = item
        if status_of(item) ~= "active" then
          hl[#lines] = "Comment"
        end
      end
    end
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = FOOTER
  hl[#lines] = "Comment"
  return lines, rows, hl
end

--- Close the float (no-op when none is open).
function M.close()
  local st = state
  state = nil
  if st and api.nvim_win_is_valid(st.win) then
    api.nvim_win_close(st.win, true)
  end
end

local function row_item()
  local st = state
  if not st or not api.nvim_win_is_valid(st.win) then
    return nil, nil
  end
  local item = st.rows[api.nvim_win_get_cursor(st.win)[1]]
  if not item then
    notify("no memory on this line")
    return nil, st
  end
  return item, st
end

local function client_of(st)
  local client = st and vim.lsp.get_client_by_id(st.client_id)
  if not client then
    show_error("memory", { message = "the rutter language server has stopped" })
  end
  return client
end

local function keymaps(buf)
  local opts = { buffer = buf, nowait = true, silent = true }
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, vim.tbl_extend("force", opts, { desc = "rutter: " .. desc }))
  end
  map("q", M.close, "close")
  map("R", M.reload, "reload memories")
  map("a", function()
    M.add(nil)
  end, "add a project memory")
  map("A", function()
    M.add("user")
  end, "add a user memory")
  map("e", M.edit_row, "edit memory")
  map("<CR>", M.edit_row, "edit memory")
  map("d", M.toggle_row, "disable or enable memory")
  map("D", M.delete_row, "delete memory permanently")
end

local function render(result)
  local st = assert(state)
  local lines, rows, hl = M.format(result, st.workspace_id)
  ui.draw_list(st, ns, lines, rows, hl, {
    title = " rutter memory ",
    min_width = 50,
    keymaps = keymaps,
    closed = function(win)
      if state and state.win == win then
        state = nil
      end
    end,
  })
  st.result = result
  fire({ action = "list", result = result })
end

local function list_params(st)
  return { uri = st.uri, all = true }
end

--- Re-request the open float's list.
function M.reload()
  local st = state
  if not st or not api.nvim_win_is_valid(st.win) then
    return
  end
  local client = client_of(st)
  if not client then
    return
  end
  call(client, M.LIST, list_params(st), function(err, result)
    if state ~= st then
      return -- closed or replaced meanwhile
    end
    if err then
      result = { error = { code = type(err.data) == "table" and err.data.code or "request_failed", message = error_text(err) } }
    end
    render(result or { error = { code = "no_answer", message = "the server answered nothing" } })
  end)
end

local function source_of(bufnr)
  local rutter = require("rutter")
  local client = rutter.client_for(bufnr) or vim.lsp.get_clients({ name = "rutter" })[1]
  if not client then
    return nil
  end
  local name = api.nvim_buf_get_name(bufnr)
  local uri, folder = nil, nil
  if name ~= "" and vim.bo[bufnr].buftype == "" then
    local path = vim.fs.normalize(vim.fn.fnamemodify(name, ":p"))
    for _, f in ipairs(client.workspace_folders or {}) do
      local dir = vim.fs.normalize(vim.uri_to_fname(f.uri))
      if path == dir or vim.startswith(path, dir:gsub("/$", "") .. "/") then
        if folder == nil or #dir > #folder then
          folder = dir
        end
      end
    end
    if folder then
      uri = vim.uri_from_fname(path)
    end
  end
  return client, uri
end

--- `:RutterMemory`: open (or reload) the list for the current buffer's workspace.
function M.show()
  if state and api.nvim_win_is_valid(state.win) then
    if api.nvim_get_current_win() == state.win then
      return M.reload()
    end
    M.close()
  end
  local bufnr = api.nvim_get_current_buf()
  local client, uri = source_of(bufnr)
  if not client then
    notify("no rutter language server is running; open a file of a project first", vim.log.levels.WARN)
    return
  end
  state = {
    client_id = client.id,
    uri = uri,
    source_win = api.nvim_get_current_win(),
    rows = {},
    lines = {},
  } --[[@as rutter.MemoryFloat]]
  local st = state
  local function list()
    call(client, M.LIST, list_params(st), function(err, result)
      if state ~= st then
        return
      end
      if err then
        result = { error = { code = type(err.data) == "table" and err.data.code or "request_failed", message = error_text(err) } }
      end
      render(result or { error = { code = "no_answer", message = "the server answered nothing" } })
    end)
  end
  if not uri then
    return list()
  end
  -- The header names the workspace by its ID (which need not be the folder's name).
  require("rutter.session").workspace_of(client, bufnr, function(workspace_id)
    st.workspace_id = workspace_id
    list()
  end)
end

-- -- disable / enable / delete ---------------------------------------------------------------------

--- `d`: disable the memory on the cursor's line, or enable it again.
function M.toggle_row()
  local item, st = row_item()
  local client = item and client_of(st)
  if not item or not client then
    return
  end
  local status = item.status == "disabled" and "active" or "disabled"
  call(client, M.SET_STATUS, { id = item.id, version = item.version, status = status }, function(err, result)
    if err then
      fire({ action = "status", id = item.id, error = show_error("memory " .. item.id .. " unchanged", err) })
    else
      notify(string.format("memory %s is %s (version %d)", item.id, result.status, result.version))
      fire({ action = "status", id = item.id, version = result.version, result = result })
    end
    M.reload()
  end)
end

--- `D`: delete the memory on the cursor's line; the server asks before anything happens.
function M.delete_row()
  local item, st = row_item()
  local client = item and client_of(st)
  if not item or not client then
    return
  end
  call(client, M.DELETE, { id = item.id, version = item.version }, function(err, result)
    if err then
      fire({ action = "delete", id = item.id, error = show_error("memory " .. item.id .. " not deleted", err) })
    elseif result and result.deleted then
      notify("memory " .. item.id .. " deleted permanently")
      fire({ action = "delete", id = item.id, version = item.version, result = result })
    else
      notify("memory " .. item.id .. " kept")
      fire({ action = "delete", id = item.id, version = item.version, result = result })
    end
    M.reload()
  end)
end

-- -- adding and editing in a scratch buffer ----------------------------------------------------------

--- Title, content of a draft buffer's lines: line 1 is the title, then one blank line, then
--- the content, whose trailing blank lines are dropped (a `:w` with empty lines at the end
--- stores none of them).
--- @param lines string[]
--- @param trailing_newline boolean
--- @return string title, string content
function M.parse(lines, trailing_newline)
  local title = lines[1] or ""
  local start = 2
  if lines[2] ~= nil and vim.trim(lines[2]) == "" then
    start = 3
  end
  local last = #lines
  while last >= start and vim.trim(lines[last]) == "" do
    last = last - 1
  end
  local content = table.concat(lines, "\n", start, math.max(last, start - 1))
  if trailing_newline and content ~= "" then
    content = content .. "\n"
  end
  return title, content
end

M.STORE_REDACTED = "Store with the secrets redacted"
M.KEEP_EDITING = "Keep editing"

--- The draft's lines for `title` and `content` (as `open_draft` lays them out).
local function draft_lines(title, content)
  local body = vim.split(content:gsub("\n$", ""), "\n", { plain = true })
  if content == "" then
    body = { "" }
  end
  return vim.list_extend({ title, "" }, body)
end

local write_draft

--- A save refused for secrets: ask whether to store the text with them redacted (what
--- `--redact-sensitive` does on the command line); the buffer keeps the text either way.
local function offer_redaction(buf, draft, action, err)
  local message = type(err.data) == "table" and err.data.message or err.message or "secrets found"
  vim.ui.select({ M.STORE_REDACTED, M.KEEP_EDITING }, {
    prompt = "rutter: " .. message .. ": ",
    kind = "rutter_secret",
  }, function(choice)
    vim.schedule(function()
      if choice == M.STORE_REDACTED and api.nvim_buf_is_valid(buf) then
        write_draft(buf, true)
      else
        local text = "not saved: the text holds secrets; remove them, or save again and choose \""
          .. M.STORE_REDACTED
          .. '"'
        M.last_error = text
        notify(text, vim.log.levels.WARN)
        fire({ action = action, id = draft.id, version = draft.version, error = text })
      end
    end)
  end)
end

--- Send the draft in `buf`; `redact`: store it with its secrets redacted.
function write_draft(buf, redact)
  local draft = drafts[buf]
  if not draft then
    return
  end
  local client = vim.lsp.get_client_by_id(draft.client_id)
  if not client then
    show_error("not saved", { message = "the rutter language server has stopped" })
    return
  end
  local title, content = M.parse(api.nvim_buf_get_lines(buf, 0, -1, false), draft.trailing_newline)
  local method, params
  if draft.id then
    method = M.EDIT
    params = { id = draft.id, version = draft.version, title = title, content = content }
  else
    method = M.CREATE
    params = { scope = draft.scope, title = title, content = content }
    if draft.scope == "project" then
      params.uri = draft.uri
    end
  end
  if redact then
    params.redact_sensitive = true
  end
  local action = draft.id and "edit" or "create"
  call(client, method, params, function(err, result)
    if not api.nvim_buf_is_valid(buf) then
      return
    end
    if err and not redact and type(err.data) == "table" and err.data.code == "secret_detected" then
      return offer_redaction(buf, draft, action, err)
    end
    if err then
      local what = draft.id and ("memory " .. draft.id .. " not saved") or "memory not created"
      local text = show_error(what, err)
      if type(err.data) == "table" and err.data.code == "conflict" then
        notify(
          "your text stays in this buffer; open the memory again from :RutterMemory (e) to edit "
            .. "the current version",
          vim.log.levels.WARN
        )
      end
      fire({ action = action, id = draft.id, version = draft.version, error = text })
      return
    end
    local changed = draft.version ~= result.version
    draft.id, draft.version = result.id, result.version
    pcall(api.nvim_buf_set_name, buf, "rutter://memory/" .. result.id)
    if redact then -- show what was stored: the secrets must not stay in the buffer either
      api.nvim_buf_set_lines(buf, 0, -1, false, draft_lines(result.title, result.content))
    end
    vim.bo[buf].modified = false
    M.last_error = nil
    if action == "create" then
      notify(string.format("memory %s created (%s, version 1)", result.id, result.scope))
    elseif changed then
      notify(string.format("memory %s saved as version %d", result.id, result.version))
    else
      notify("memory " .. result.id .. " unchanged")
    end
    fire({ action = action, id = result.id, version = result.version, result = result })
    if state and api.nvim_win_is_valid(state.win) then
      M.reload()
    end
  end)
end

local function open_draft(draft, title, content, name)
  local buf = api.nvim_create_buf(true, false)
  vim.bo[buf].buftype = "acwrite" -- `:w` runs BufWriteCmd: nothing is written to disk
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  pcall(api.nvim_buf_set_name, buf, name)
  api.nvim_buf_set_lines(buf, 0, -1, false, draft_lines(title, content))
  vim.bo[buf].modified = false
  vim.bo[buf].filetype = "markdown"
  drafts[buf] = draft
  api.nvim_create_autocmd("BufWriteCmd", {
    buffer = buf,
    callback = function(args)
      write_draft(args.buf)
    end,
  })
  api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function(args)
      drafts[args.buf] = nil
    end,
  })
  local st = state
  local from = st and st.source_win
  M.close()
  if from and api.nvim_win_is_valid(from) then
    api.nvim_set_current_win(from)
  end
  vim.cmd("split")
  api.nvim_win_set_buf(0, buf)
  api.nvim_win_set_cursor(0, { 1, 0 })
  return buf
end

--- `a` / `A`: a new memory in a scratch buffer; `:w` creates it. `scope` nil: project memory
--- of the list's workspace, or user memory when the list has none.
--- @param scope? "user"|"project"
function M.add(scope)
  local st = state
  local client = client_of(st)
  if not st or not client then
    return
  end
  scope = scope or (st.uri and "project" or "user")
  local draft = { client_id = client.id, scope = scope, uri = st.uri, trailing_newline = false }
  local label = scope == "project" and ("project (workspace " .. (st.workspace_id or "?") .. ")") or "user"
  open_draft(draft, "", "", "rutter://memory/new-" .. scope)
  notify("new " .. label .. " memory: title on the first line, a blank line, then the content; :w saves")
end

--- `e` / `<CR>`: edit the memory on the cursor's line in a scratch buffer; `:w` saves it.
function M.edit_row()
  local item, st = row_item()
  local client = item and client_of(st)
  if not item or not client then
    return
  end
  local content = item.content or ""
  local draft = {
    client_id = client.id,
    id = item.id,
    version = item.version,
    scope = item.scope,
    trailing_newline = content:sub(-1) == "\n",
  }
  open_draft(draft, item.title or "", content, "rutter://memory/" .. item.id)
end

--- What the float shows (for tests and scripts), or nil.
--- @return { win: integer, buf: integer, lines: string[], rows: table<integer, string>, result: table? }?
function M.float()
  if not state or not state.win or not api.nvim_win_is_valid(state.win) then
    return nil
  end
  local rows = {}
  for lnum, item in pairs(state.rows) do
    rows[lnum] = item.id
  end
  return vim.deepcopy({ win = state.win, buf = state.buf, lines = state.lines, rows = rows, result = state.result })
end

--- The draft of a scratch buffer (for tests and statuslines), or nil.
function M.draft(buf)
  local draft = drafts[buf or api.nvim_get_current_buf()]
  return draft and vim.deepcopy(draft) or nil
end

function M.init()
  api.nvim_create_user_command("RutterMemory", function()
    M.show()
  end, { desc = "rutter: user and project memory (add, edit, disable, delete)" })
end

return M
