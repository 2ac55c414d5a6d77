-- Helpers for the real-Neovim tests (tests/test_neovim.py). A scenario script does
--
--   local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
--   H.run(function(R) ... R.some_result = ... end)
--
-- H.run traps every error, writes {"ok", "error", "results"} as JSON to $RUTTER_NVIM_OUT and
-- quits Neovim, so a failing or hanging step fails the Python test fast with a traceback.
local H = {}
local api = vim.api

H.ws = assert(vim.env.RUTTER_NVIM_WS, "RUTTER_NVIM_WS not set")
H.timeout = tonumber(vim.env.RUTTER_NVIM_WAIT_MS or "20000")
H.events = {} -- User RutterInstructionsChanged / RutterInstructionsUpdated, in order

function H.path(rel)
  return vim.fs.joinpath(H.ws, rel)
end

--- Wait (bounded) until `cond()` is truthy; raise naming `what` on timeout.
function H.wait(what, cond, ms)
  local ok = vim.wait(ms or H.timeout, function()
    return cond() and true or false
  end, 20)
  if not ok then
    error("timed out waiting for " .. what, 2)
  end
end

function H.edit(rel)
  vim.cmd.edit(vim.fn.fnameescape(H.path(rel)))
  return api.nvim_get_current_buf()
end

--- The rutter client attached to `buf`, waiting for it to attach.
function H.attached(buf)
  local client
  H.wait("rutter to attach to " .. api.nvim_buf_get_name(buf), function()
    client = vim.lsp.get_clients({ bufnr = buf, name = "rutter" })[1]
    return client
  end)
  return client
end

function H.float()
  return require("rutter").float()
end

--- Run an Ex command and wait for the float to show an answer for which `pred` holds.
function H.float_after(command, what, pred)
  local before = #H.updates()
  vim.cmd(command)
  H.wait(what or "the float after :" .. command, function()
    local f = H.float()
    return f and #H.updates() > before and (pred == nil or pred(f))
  end)
  return H.float()
end

function H.updates()
  return vim.tbl_filter(function(e)
    return e.event == "RutterInstructionsUpdated"
  end, H.events)
end

function H.changes()
  return vim.tbl_filter(function(e)
    return e.event == "RutterInstructionsChanged"
  end, H.events)
end

function H.contains(lines, needle)
  for _, line in ipairs(lines) do
    if line:find(needle, 1, true) then
      return true
    end
  end
  return false
end

--- The 1-based row of the float showing `path` as a source (first row mapped to it).
function H.row_of(f, path)
  local best
  for row, p in pairs(f.rows) do
    if p == path and (best == nil or row < best) then
      best = row
    end
  end
  return best
end

--- Press keys as a user would (mappings applied), processed before returning.
function H.press(keys)
  api.nvim_feedkeys(vim.keycode(keys), "mx", false)
end

--- Write a file on disk behind Neovim's back (as an agent or `git checkout` would).
function H.write_disk(rel, text)
  local file = assert(io.open(H.path(rel), "wb"))
  file:write(text)
  file:close()
end

--- The float as JSON-friendly data (its row → path map with string keys).
function H.float_data(f)
  f = f or H.float()
  if not f then
    return vim.NIL
  end
  local rows = {}
  for row, path in pairs(f.rows) do
    rows[tostring(row)] = path
  end
  return { lines = f.lines, rows = rows, target = f.target, uri = f.uri, result = f.result }
end

--- The code lenses of `buf` once the server sent some: {line, title, command} each.
function H.lenses(buf)
  H.wait("code lenses on " .. api.nvim_buf_get_name(buf), function()
    return #vim.lsp.codelens.get(buf) > 0
  end)
  return vim.tbl_map(function(lens)
    return { line = lens.range.start.line, title = lens.command.title, command = lens.command.command }
  end, vim.lsp.codelens.get(buf))
end

function H.diagnostics(buf)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(found, {
      lnum = d.lnum,
      col = d.col,
      end_lnum = d.end_lnum,
      end_col = d.end_col,
      severity = vim.diagnostic.severity[d.severity],
      code = d.code,
      source = d.source,
      message = d.message,
    })
  end
  table.sort(found, function(a, b)
    return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col)
  end)
  return found
end

--- Attach a real (minimal) UI, as a person's terminal would be: a second Neovim running
--- tests/neovim/ui_client.lua connected to this one's server address. Headless Neovim without
--- a UI never stops at a hit-enter prompt; with one it does, as for a person.
function H.attach_ui(width, height)
  local client = vim.fs.joinpath(vim.fs.dirname(vim.env.RUTTER_NVIM_HARNESS), "ui_client.lua")
  H.ui_job = vim.system({
    vim.v.progpath, "--clean", "--headless", "-l", client, vim.v.servername,
    tostring(width or 80), tostring(height or 24),
  })
  H.wait("a UI to attach", function()
    return #api.nvim_list_uis() > 0
  end)
end

local function finish(ok, err, results)
  results.events = H.events
  results.messages = api.nvim_exec2("messages", { output = true }).output
  local payload = vim.json.encode({ ok = ok, error = ok and vim.NIL or tostring(err), results = results })
  local file = assert(io.open(assert(vim.env.RUTTER_NVIM_OUT), "w"))
  file:write(payload)
  file:close()
  vim.cmd("qa!")
end

--- Record every prompt Neovim blocks at (hit-enter `r`, more `rm`, confirm `r?`) into
--- `H.prompts`, and answer it with <CR> so the scenario goes on. It runs on a libuv timer:
--- `nvim_get_mode` and `nvim_input` work while Neovim waits for a key.
function H.watch_prompts()
  H.prompts = {}
  local timer = assert(vim.uv.new_timer())
  timer:start(50, 50, function()
    local mode = api.nvim_get_mode()
    if mode.blocking and vim.startswith(mode.mode, "r") then
      H.prompts[#H.prompts + 1] = mode.mode
      api.nvim_input("<CR>")
    end
  end)
  return timer
end

--- Like H.run, for what a person at a terminal sees: with a UI attached (see H.attach_ui),
--- from the main loop (after startup), every prompt recorded (H.watch_prompts) in
--- `results.prompts`. After `body`, Neovim stays idle for `idle_ms` (redraws and pending
--- callbacks run as they would for a person) and then `later(results)`, if given, reads
--- what is left on the screen.
function H.run_ui(body, idle_ms, later)
  vim.defer_fn(function()
    local results = {}
    local timer = nil
    local ok, err = xpcall(function()
      H.attach_ui(100, 30)
      timer = H.watch_prompts()
      body(results)
    end, debug.traceback, results)
    if not ok then
      results.prompts = H.prompts
      return finish(ok, err, results)
    end
    vim.defer_fn(function()
      local later_ok, later_err = true, nil
      if later then
        later_ok, later_err = xpcall(later, debug.traceback, results)
      end
      if timer then
        timer:stop()
        timer:close()
      end
      results.prompts = H.prompts
      finish(later_ok, later_err, results)
    end, idle_ms or 1000)
  end, 50)
end

function H.run(body)
  local results = {}
  api.nvim_create_autocmd("User", {
    pattern = { "RutterInstructionsChanged", "RutterInstructionsUpdated" },
    callback = function(args)
      local data = args.data or {}
      table.insert(H.events, {
        event = args.match,
        workspace_id = data.workspace_id,
        paths = data.paths,
        uri = data.uri,
      })
    end,
  })
  local ok, err = xpcall(body, debug.traceback, results)
  finish(ok, err, results)
end

return H
