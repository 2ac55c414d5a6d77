--- `:RutterRuns`: the active runs of the served workspaces, with their drift.
---
--- The float lists each active run (status, revision, target, goal) and marks the runs whose
--- pinned instructions differ from the disk. `<CR>` on a stale run starts the server's review
--- (`rutter.reviewRefresh`: the diff is shown, then Confirm/Cancel through `vim.ui.select`);
--- `R` reloads, `q` closes. The same review is the code action on a drift diagnostic
--- (`vim.lsp.buf.code_action()`).
local M = {}

local api = vim.api
local ui = require("rutter.ui")

M.METHOD = "rutter/runs"
M.REVIEW = "rutter.reviewRefresh"

local ns = api.nvim_create_namespace("rutter.runs")
local state = nil --- @type { win: integer, buf: integer, client_id: integer, rows: table<integer, table>, lines: string[], result: table? }?

local function notify(message, level)
  ui.notify(message, level)
end

--- Lines for a `rutter/runs` answer: a header, then one or two lines per run.
--- @param result table `{ runs = {...} }` or `{ error = {...} }`
--- @return string[] lines, table<integer, table> rows (line → run), table<integer, string> hl
function M.format(result)
  local lines, rows, hl = {}, {}, {}
  if type(result) ~= "table" or result.error then
    local err = type(result) == "table" and result.error or {}
    lines[1] = string.format("error[%s]: %s", err.code or "unknown", err.message or "no answer")
    hl[1] = "DiagnosticError"
    return lines, rows, hl
  end
  local runs = result.runs or {}
  if #runs == 0 then
    lines[1] = "No active runs. Create one with: rutter run create --goal TEXT"
    return lines, rows, hl
  end
  local stale = 0
  for _, run in ipairs(runs) do
    if run.stale then
      stale = stale + 1
    end
  end
  lines[1] = string.format("%d active run%s, %d stale", #runs, #runs == 1 and "" or "s", stale)
  hl[1] = "Title"
  for _, run in ipairs(runs) do
    local marker = "  "
    local note = "up to date"
    local group = nil
    if run.error then
      marker, note, group = "✗ ", "unreadable: " .. (run.error.code or "error"), "DiagnosticError"
    elseif run.live_error then
      marker, note, group = "! ", "discovery fails closed: " .. (run.live_error.code or "error"), "DiagnosticError"
    elseif run.stale then
      marker, note, group = "⚠ ", "stale: <CR> to review and confirm a refresh", "DiagnosticWarn"
    end
    local revision = run.revision ~= vim.NIL and run.revision ~= nil and ("revision " .. run.revision) or "no revision"
    lines[#lines + 1] = string.format(
      "%s%s  [%s]  %s  %s  (%s)",
      marker,
      run.run_id,
      run.status or "?",
      run.workspace_id or "?",
      run.target_path or ".",
      revision
    )
    rows[#lines] = run
    if group then
      hl[#lines] = group
    end
    lines[#lines + 1] = string.format("    %s — %s", note, run.goal or "")
    rows[#lines] = run
  end
  return lines, rows, hl
end

function M.close()
  local st = state
  state = nil
  if st and api.nvim_win_is_valid(st.win) then
    api.nvim_win_close(st.win, true)
  end
end

local function client_for_current()
  local rutter = require("rutter")
  local client = rutter.client_for(api.nvim_get_current_buf())
  if client then
    return client
  end
  return vim.lsp.get_clients({ name = "rutter" })[1]
end

local function render(client, result)
  local lines, rows, hl = M.format(result)
  if state and api.nvim_win_is_valid(state.win) then
    ui.set_lines(state.buf, ns, lines, hl)
    api.nvim_win_set_config(state.win, ui.geometry(lines, 40))
  else
    local buf = api.nvim_create_buf(false, true)
    vim.bo[buf].bufhidden = "wipe"
    vim.bo[buf].swapfile = false
    local config = ui.geometry(lines, 40)
    config.style = "minimal"
    config.border = "rounded"
    config.title = " rutter runs "
    config.title_pos = "center"
    local win = api.nvim_open_win(buf, true, config)
    vim.wo[win].cursorline = true
    vim.bo[buf].filetype = "rutter"
    ui.set_lines(buf, ns, lines, hl)
    local opts = { buffer = buf, nowait = true, silent = true }
    vim.keymap.set("n", "q", M.close, vim.tbl_extend("force", opts, { desc = "rutter: close" }))
    vim.keymap.set("n", "R", function()
      M.show()
    end, vim.tbl_extend("force", opts, { desc = "rutter: reload runs" }))
    vim.keymap.set("n", "<CR>", M.review_row, vim.tbl_extend("force", opts, { desc = "rutter: review and confirm refresh" }))
    state = { win = win, buf = buf, client_id = client.id, rows = {}, lines = {} }
  end
  local st = assert(state)
  st.client_id = client.id
  st.rows = rows
  st.lines = lines
  st.result = result
  api.nvim_exec_autocmds("User", { pattern = "RutterRunsUpdated", modeline = false, data = { result = result } })
end

--- Ask the server for the active runs; `callback(result)` gets `{ runs }` or `{ error }`.
function M.request(client, callback)
  local ok = client:request(M.METHOD, vim.empty_dict(), function(err, result)
    if err then
      result = { error = { code = (type(err.data) == "table" and err.data.code) or "request_failed", message = err.message } }
    end
    callback(result or { error = { code = "no_answer", message = "the server answered nothing" } })
  end)
  if not ok then
    callback({ error = { code = "not_running", message = "the rutter language server has stopped" } })
  end
end

--- `:RutterRuns`: open (or reload) the runs float.
function M.show()
  local client = client_for_current()
  if not client then
    notify("no rutter language server is running; open a file of a project first", vim.log.levels.WARN)
    return
  end
  M.request(client, function(result)
    vim.schedule(function()
      render(client, result)
    end)
  end)
end

--- Start the server's review of `run_id` (diff, then Confirm/Cancel); reload the float after.
--- @param client vim.lsp.Client
--- @param run_id string
--- @param workspace_id? string the registration whose files to read (the one the float's drift
---   came from: a run made through another registration of the project is reviewed against
---   the served files)
function M.review(client, run_id, workspace_id)
  local argument = workspace_id and { run_id = run_id, workspace_id = workspace_id } or run_id
  client:request("workspace/executeCommand", { command = M.REVIEW, arguments = { argument } }, function(err, result)
    vim.schedule(function()
      if err then
        notify("review of " .. run_id .. " failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      end
      api.nvim_exec_autocmds("User", {
        pattern = "RutterRunReviewed",
        modeline = false,
        data = { run_id = run_id, result = result, error = err and err.message or nil },
      })
      if state and api.nvim_win_is_valid(state.win) then
        M.show()
      end
    end)
  end)
end

--- `<CR>` in the float: review the run on the cursor's line.
function M.review_row()
  local st = state
  if not st or not api.nvim_win_is_valid(st.win) then
    return
  end
  local run = st.rows[api.nvim_win_get_cursor(st.win)[1]]
  if not run then
    notify("no run on this line")
    return
  end
  if not run.stale then
    notify("run " .. run.run_id .. " already uses the instructions on disk")
    return
  end
  local client = vim.lsp.get_client_by_id(st.client_id)
  if client then
    M.review(client, run.run_id, run.drift_workspace_id ~= vim.NIL and run.drift_workspace_id or nil)
  end
end

--- Handler of `rutter/runsChanged` `{ workspace_ids }`: reloads the open float, then fires
--- `User RutterRunsChanged` with the params and the client id as data.
function M.on_runs_changed(_, params, ctx)
  params = type(params) == "table" and params or {}
  local client_id = ctx and ctx.client_id
  vim.schedule(function()
    if state and api.nvim_win_is_valid(state.win) and state.client_id == client_id then
      local client = vim.lsp.get_client_by_id(client_id)
      if client then
        M.request(client, function(result)
          vim.schedule(function()
            if state and api.nvim_win_is_valid(state.win) then
              render(client, result)
            end
          end)
        end)
      end
    end
    api.nvim_exec_autocmds("User", {
      pattern = "RutterRunsChanged",
      modeline = false,
      data = { client_id = client_id, workspace_ids = params.workspace_ids },
    })
  end)
end

--- What the float shows (for tests and scripts), or nil.
function M.float()
  if not state or not api.nvim_win_is_valid(state.win) then
    return nil
  end
  return vim.deepcopy({ win = state.win, buf = state.buf, lines = state.lines, result = state.result })
end

function M.init()
  api.nvim_create_user_command("RutterRuns", function()
    M.show()
  end, { desc = "rutter: active runs and whether their pinned instructions are stale" })
end

return M
