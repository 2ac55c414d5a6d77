--- `:RutterCandidates`: experience candidates of the current buffer's workspace, for a person
--- to review. A candidate is a referenced decision or summary note of finished work (a run
--- that completed, a delivery checkpoint, an imported agent reply that ended); nothing becomes
--- project memory until you confirm it here (or in the CLI, VS Code or the HTTP API).
---
--- Keys in the float:
---   <CR>, o  show the candidate's exact text, references, completion record and confidence note
---   c        confirm: asks "Confirm and Save to Project" / "Cancel" (vim.ui.select), then saves
---            exactly what was shown; a note with a secret cut out asks before saving it redacted
---   x        ignore it (resolved without a memory)
---   R        reload, q close
---
--- Every outcome fires `User RutterCandidates` with data `{ action, id?, result?, error? }`
--- (action: "list", "confirm", "ignore", "cancel").
local M = {}

local api = vim.api
local ui = require("rutter.ui")

M.LIST = "rutter/memory/candidates"
M.CONFIRM = "rutter/memory/confirmCandidate"
M.IGNORE = "rutter/memory/ignoreCandidate"
M.CONFIRM_ACTION = "Confirm and Save to Project"
M.STORE_REDACTED = "Store with the secrets redacted"
M.CANCEL = "Cancel"

local ns = api.nvim_create_namespace("rutter.candidates")
local FOOTER = "<CR> show text · c confirm and save · x ignore · R reload · q close"
local COMPLETION = {
  run_completed = "run completed",
  reply_completed = "agent reply ended",
  delivery_checkpoint = "delivery checkpoint",
  delivery_report = "delivery report passed",
}

--- @class rutter.CandidatesFloat
--- @field win? integer
--- @field buf? integer
--- @field client_id integer
--- @field uri? string
--- @field workspace_id? string
--- @field rows table<integer, table> line → candidate
--- @field lines string[]
--- @field result? table
--- @field expanded table<string, boolean> candidate IDs shown with their text
local state = nil --- @type rutter.CandidatesFloat?

M.last_error = nil --- @type string?

local function fire(data)
  api.nvim_exec_autocmds("User", { pattern = "RutterCandidates", modeline = false, data = data })
end

local call = ui.request
local error_data = ui.error_of

local function show_error(what, err)
  local data = error_data(err)
  local text = string.format("%s: %s [%s]", what, data.message or "failed", data.code or "error")
  M.last_error = text
  ui.notify(text, vim.log.levels.ERROR)
  return data
end

--- Lines for a `rutter/memory/candidates` answer.
--- @param result table `{ workspace_id, items, scanned, truncated }` or `{ error }`
--- @param expanded? table<string, boolean> candidates shown with their text
--- @return string[] lines, table<integer, table> rows, table<integer, string> hl
function M.format(result, expanded)
  expanded = expanded or {}
  local lines, rows, hl = {}, {}, {}
  lines[1] = "rutter · experience candidates of workspace " .. (result.workspace_id or "?")
  hl[1] = "Title"
  if result.error then
    lines[#lines + 1] = string.format("cannot list them: %s [%s]", result.error.message or "", result.error.code or "")
    hl[#lines] = "ErrorMsg"
  elseif #(result.items or {}) == 0 then
    lines[#lines + 1] = string.format(
      "none pending (%d notes scanned): a decision or summary with a reference becomes one when its run has a completion record",
      result.scanned or 0
    )
    hl[#lines] = "Comment"
  else
    lines[#lines + 1] = string.format(
      "%d to review%s; nothing is saved until you confirm",
      #result.items,
      result.truncated and " (more are waiting)" or ""
    )
    hl[#lines] = "Comment"
    lines[#lines + 1] = ""
    for _, item in ipairs(result.items) do
      local completion = COMPLETION[item.completion.kind] or item.completion.kind
      lines[#lines + 1] = string.format(
        "%s  %s · note v%d%s",
        item.title or item.candidate_id,
        completion,
        item.source.note_version,
        item.redacted and " · redacted" or ""
      )
      rows[#lines] = item
      if expanded[item.candidate_id] then
        for _, text in ipairs(vim.split(item.content or "", "\n", { plain = true })) do
          lines[#lines + 1] = "    " .. text
          rows[#lines] = item
        end
        local details = {
          "references: " .. (#item.references > 0 and table.concat(item.references, ", ") or "-"),
          string.format("completion: %s at %s", item.completion.kind, item.completion.at),
          string.format(
            "source: run %s · note %s v%d",
            item.source.run_id or "-",
            item.source.note_id,
            item.source.note_version
          ),
          item.confidence_note,
        }
        for _, text in ipairs(details) do
          lines[#lines + 1] = "    " .. text
          rows[#lines] = item
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

function M.close()
  local st = state
  state = nil
  if st and st.win and api.nvim_win_is_valid(st.win) then
    api.nvim_win_close(st.win, true)
  end
end

local function client_of(st)
  local client = st and vim.lsp.get_client_by_id(st.client_id)
  if not client then
    show_error("candidates", { message = "the rutter language server has stopped" })
  end
  return client
end

local function row_item()
  local st = state
  if not st or not st.win or not api.nvim_win_is_valid(st.win) then
    return nil, nil
  end
  local item = st.rows[api.nvim_win_get_cursor(st.win)[1]]
  if not item then
    ui.notify("no candidate on this line")
    return nil, st
  end
  return item, st
end

local function keymaps(buf)
  local opts = { buffer = buf, nowait = true, silent = true }
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, vim.tbl_extend("force", opts, { desc = "rutter: " .. desc }))
  end
  map("q", M.close, "close")
  map("R", M.reload, "reload candidates")
  map("<CR>", M.toggle_text, "show the candidate's text")
  map("o", M.toggle_text, "show the candidate's text")
  map("c", M.confirm_row, "confirm and save to project memory")
  map("x", M.ignore_row, "ignore the candidate")
end

local function render(result)
  local st = assert(state)
  local lines, rows, hl = M.format(result, st.expanded)
  ui.draw_list(st, ns, lines, rows, hl, {
    title = " rutter experience candidates ",
    min_width = 60,
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

local function list(st, client)
  local params = st.workspace_id and { workspace_id = st.workspace_id } or { uri = st.uri }
  call(client, M.LIST, params, function(err, result)
    if state ~= st then
      return
    end
    if err then
      local data = error_data(err)
      result = { workspace_id = st.workspace_id, error = { code = data.code, message = data.message } }
    end
    render(result or { error = { code = "no_answer", message = "the server answered nothing" } })
  end)
end

function M.reload()
  local st = state
  if not st or not st.win or not api.nvim_win_is_valid(st.win) then
    return
  end
  local client = client_of(st)
  if client then
    list(st, client)
  end
end

--- `:RutterCandidates`: open (or reload) the list for the current buffer's workspace.
function M.show()
  if state and state.win and api.nvim_win_is_valid(state.win) then
    if api.nvim_get_current_win() == state.win then
      return M.reload()
    end
    M.close()
  end
  local bufnr = api.nvim_get_current_buf()
  local rutter = require("rutter")
  local client = rutter.client_for(bufnr) or vim.lsp.get_clients({ name = "rutter" })[1]
  if not client then
    ui.notify("no rutter language server is running; open a file of a project first", vim.log.levels.WARN)
    return
  end
  local name = api.nvim_buf_get_name(bufnr)
  local uri = (name ~= "" and vim.bo[bufnr].buftype == "") and vim.uri_from_fname(vim.fn.fnamemodify(name, ":p")) or nil
  state = { client_id = client.id, uri = uri, rows = {}, lines = {}, expanded = {} } --[[@as rutter.CandidatesFloat]]
  local st = state
  if not uri then
    return list(st, client)
  end
  require("rutter.session").workspace_of(client, bufnr, function(workspace_id)
    st.workspace_id = workspace_id
    list(st, client)
  end)
end

--- `<CR>`/`o`: show or hide the exact text of the candidate on the cursor's line.
function M.toggle_text()
  local item, st = row_item()
  if not item or not st then
    return
  end
  st.expanded[item.candidate_id] = not st.expanded[item.candidate_id] or nil
  render(st.result)
end

local function after_change(st, action, item, err, result)
  if err then
    local data = show_error(action == "confirm" and "confirm" or "ignore", err)
    fire({ action = action, id = item.candidate_id, error = data })
  else
    fire({ action = action, id = item.candidate_id, result = result })
  end
  if state == st then
    M.reload()
  end
end

--- `c`: confirm the candidate on the cursor's line, after asking; saves exactly what was shown.
function M.confirm_row()
  local item, st = row_item()
  local client = item and client_of(st)
  if not item or not client or not st then
    return
  end
  local function send(redact)
    local params = {
      id = item.candidate_id,
      version = item.version,
      fingerprint = item.fingerprint,
      source_version = item.source.note_version,
      confirm = true,
      redact_sensitive = redact or nil,
    }
    call(client, M.CONFIRM, params, function(err, result)
      local data = err and error_data(err)
      if data and data.code == "secret_detected" and not redact then
        vim.ui.select({ M.STORE_REDACTED, M.CANCEL }, {
          prompt = "The note had a secret cut out. Save the redacted text to project memory?",
        }, function(choice)
          if choice == M.STORE_REDACTED then
            send(true)
          else
            fire({ action = "cancel", id = item.candidate_id })
          end
        end)
        return
      end
      if not err and result and result.memory then
        ui.notify("saved to project memory: " .. (result.memory.title or result.memory.id))
      end
      after_change(st, "confirm", item, err, result)
    end)
  end
  vim.ui.select({ M.CONFIRM_ACTION, M.CANCEL }, {
    prompt = string.format('Save "%s" to the project memory of %s?', item.title or item.candidate_id, item.workspace_id),
  }, function(choice)
    if choice == M.CONFIRM_ACTION then
      send(false)
    else
      fire({ action = "cancel", id = item.candidate_id })
    end
  end)
end

--- `x`: ignore the candidate on the cursor's line.
function M.ignore_row()
  local item, st = row_item()
  local client = item and client_of(st)
  if not item or not client or not st then
    return
  end
  call(client, M.IGNORE, { id = item.candidate_id, version = item.version }, function(err, result)
    after_change(st, "ignore", item, err, result)
  end)
end

--- What the float shows (for tests), or nil.
function M.float()
  if not state or not state.win or not api.nvim_win_is_valid(state.win) then
    return nil
  end
  local rows = {}
  for lnum, item in pairs(state.rows) do
    rows[lnum] = item.candidate_id
  end
  return vim.deepcopy({ win = state.win, buf = state.buf, lines = state.lines, rows = rows, result = state.result })
end

function M.init()
  api.nvim_create_user_command("RutterCandidates", function()
    M.show()
  end, { desc = "rutter: experience candidates to confirm into project memory, or ignore" })
end

return M
