--- Thread pins and the pins agents propose.
---
--- `:RutterProposals` lists the proposals waiting for an answer; `<CR>` on one asks the three
--- choices through `vim.ui.select`: "Pin" (the shown text, exactly), "Discuss" (answer without
--- pinning, an optional reply through `vim.ui.input`) and "Custom reply…" (your own words, then
--- "Pin my reply" or "Reply without pinning"). When the server says
--- `rutter/pinProposalsChanged`, each proposal not asked about yet is asked about once, with the
--- same prompt. Nothing is pinned unless you choose so.
---
--- `:RutterPins [THREAD|RUN]` lists a thread's pins (without an argument: pick an active run);
--- `a` adds, `e` edits, `d` removes (after a confirmation), `R` reloads, `q` closes. Edits and
--- removals carry the version listed: a pin changed elsewhere meanwhile is refused, not lost.
local M = {}

local api = vim.api
local ui = require("rutter.ui")

M.CHOICES = { "Pin", "Discuss", "Custom reply…" }
M.PIN_REPLY = "Pin my reply"
M.REPLY_ONLY = "Reply without pinning"

local ns = api.nvim_create_namespace("rutter.pins")
local state = nil --- @type { win: integer, buf: integer, kind: string, client_id: integer, rows: table<integer, table>, lines: string[], subject: string? }?
local asked = {} --- @type table<string, boolean> proposals asked about in this session

local function notify(message, level)
  vim.notify("rutter: " .. message, level or vim.log.levels.INFO)
end

local function first_line(text)
  local line = (text or ""):match("^[^\n]*") or ""
  if #line > 72 or line ~= text then
    return line:sub(1, 71) .. "…"
  end
  return line
end

local function client_for_current()
  local client = require("rutter").client_for(api.nvim_get_current_buf())
  return client or vim.lsp.get_clients({ name = "rutter" })[1]
end

--- `client:request` with the answer or the error document as one table, on the main loop.
local function request(client, method, params, callback)
  local ok = client:request(method, params, function(err, result)
    vim.schedule(function()
      if err then
        local data = type(err.data) == "table" and err.data or {}
        callback(nil, { code = data.code or "request_failed", message = data.message or err.message })
      else
        callback(result, nil)
      end
    end)
  end)
  if not ok then
    callback(nil, { code = "not_running", message = "the rutter language server has stopped" })
  end
end

--- Lines of the proposals float.
function M.format_proposals(proposals)
  local lines, rows, hl = {}, {}, {}
  if #proposals == 0 then
    lines[1] = "No pin proposal waits for an answer."
    return lines, rows, hl
  end
  lines[1] = string.format("%d pin proposal%s wait for your answer (<CR>: answer)", #proposals, #proposals == 1 and "" or "s")
  hl[1] = "Title"
  for _, proposal in ipairs(proposals) do
    lines[#lines + 1] = string.format("%s  %s  by %s", proposal.proposal_id, proposal.workspace_id,
      require("rutter.ui").who(proposal.proposed_by, proposal.proposed_by_person))
    rows[#lines] = proposal
    hl[#lines] = "Comment"
    for _, line in ipairs(vim.split(proposal.text, "\n", { plain = true })) do
      lines[#lines + 1] = "    " .. line
      rows[#lines] = proposal
    end
  end
  return lines, rows, hl
end

--- Lines of the pins float.
function M.format_pins(list)
  local lines, rows, hl = {}, {}, {}
  local whose = "thread " .. list.thread_id
  if type(list.run_id) == "string" then
    whose = whose .. " (run " .. list.run_id .. ")"
  end
  lines[1] = string.format("%d of %d pins of %s, %d characters", list.count, list.limits.max_pins, whose, list.total_chars)
  hl[1] = "Title"
  for _, pin in ipairs(list.pins) do
    lines[#lines + 1] = string.format("%s  v%d", pin.pin_id, pin.version)
    rows[#lines] = pin
    hl[#lines] = "Comment"
    for _, line in ipairs(vim.split(pin.text, "\n", { plain = true })) do
      lines[#lines + 1] = "    " .. line
      rows[#lines] = pin
    end
  end
  lines[#lines + 1] = "a add · e edit · d remove · R reload · q close"
  hl[#lines] = "Comment"
  return lines, rows, hl
end

function M.close()
  local st = state
  state = nil
  if st and api.nvim_win_is_valid(st.win) then
    api.nvim_win_close(st.win, true)
  end
end

local function render(client, kind, lines, rows, hl, subject)
  if state and api.nvim_win_is_valid(state.win) and state.kind == kind then
    ui.set_lines(state.buf, ns, lines, hl)
    api.nvim_win_set_config(state.win, ui.geometry(lines, 40))
  else
    M.close()
    local buf = api.nvim_create_buf(false, true)
    vim.bo[buf].bufhidden = "wipe"
    local config = ui.geometry(lines, 40)
    config.style, config.border, config.title_pos = "minimal", "rounded", "center"
    config.title = kind == "pins" and " rutter pins " or " rutter pin proposals "
    local win = api.nvim_open_win(buf, true, config)
    vim.wo[win].cursorline = true
    vim.bo[buf].filetype = "rutter"
    ui.set_lines(buf, ns, lines, hl)
    local function map(key, fn, desc)
      vim.keymap.set("n", key, fn, { buffer = buf, nowait = true, silent = true, desc = "rutter: " .. desc })
    end
    map("q", M.close, "close")
    if kind == "pins" then
      map("R", function() M.pins(state and state.subject) end, "reload pins")
      map("a", M.add_row, "add a pin")
      map("e", M.edit_row, "edit the pin")
      map("d", M.remove_row, "remove the pin")
    else
      map("R", M.proposals, "reload proposals")
      map("<CR>", M.answer_row, "answer the proposal")
    end
    state = { win = win, buf = buf, kind = kind, client_id = client.id }
  end
  local st = assert(state)
  st.client_id, st.rows, st.lines, st.subject = client.id, rows, lines, subject
  api.nvim_exec_autocmds("User", { pattern = "RutterPinsUpdated", modeline = false, data = { kind = kind } })
end

--- `:RutterProposals`: open (or reload) the proposals float.
function M.proposals()
  local client = client_for_current()
  if not client then
    notify("no rutter language server is running; open a file of a project first", vim.log.levels.WARN)
    return
  end
  request(client, "rutter/pin/proposals", vim.empty_dict(), function(result, err)
    if err then
      notify("cannot list proposals: " .. err.message, vim.log.levels.ERROR)
      return
    end
    local lines, rows, hl = M.format_proposals(result.proposals)
    render(client, "proposals", lines, rows, hl, nil)
  end)
end

local function after_answer(client)
  if state and api.nvim_win_is_valid(state.win) and state.kind == "proposals" then
    M.proposals()
  end
  api.nvim_exec_autocmds("User", { pattern = "RutterProposalAnswered", modeline = false, data = { client_id = client.id } })
end

local function send_answer(client, proposal, params)
  params.proposal_id = proposal.proposal_id
  request(client, "rutter/pin/answer", params, function(result, err)
    if err then
      local why = err.code == "conflict" and "it was already answered" or err.message
      notify("cannot answer " .. proposal.proposal_id .. ": " .. why, vim.log.levels.ERROR)
    elseif result.pin ~= vim.NIL and result.pin ~= nil then
      notify("pinned " .. result.pin.pin_id .. " to thread " .. result.pin.thread_id)
    else
      notify("answered " .. proposal.proposal_id .. " (" .. params.choice .. "); nothing was pinned")
    end
    after_answer(client)
  end)
end

--- Ask the three choices about `proposal`, then answer it as chosen.
function M.ask(client, proposal)
  vim.ui.select(M.CHOICES, {
    prompt = string.format("%s proposes to pin to this task: %s",
      require("rutter.ui").who(proposal.proposed_by, proposal.proposed_by_person), proposal.text),
  }, function(choice)
    if choice == "Pin" then
      send_answer(client, proposal, { choice = "pin" })
    elseif choice == "Discuss" then
      vim.ui.input({ prompt = "Your reply (optional; nothing is pinned): " }, function(reply)
        if reply ~= nil then
          send_answer(client, proposal, { choice = "discuss", text = reply ~= "" and reply or nil })
        end
      end)
    elseif choice == "Custom reply…" then
      vim.ui.input({ prompt = "Your own words: " }, function(reply)
        if reply == nil or vim.trim(reply) == "" then
          return
        end
        vim.ui.select({ M.PIN_REPLY, M.REPLY_ONLY }, { prompt = "Pin your reply?" }, function(pin)
          if pin ~= nil then
            send_answer(client, proposal, { choice = "custom", text = reply, pin = pin == M.PIN_REPLY })
          end
        end)
      end)
    end
  end)
end

--- `<CR>` in the proposals float.
function M.answer_row()
  local st = state
  if not st or not api.nvim_win_is_valid(st.win) then
    return
  end
  local proposal = st.rows[api.nvim_win_get_cursor(st.win)[1]]
  local client = vim.lsp.get_client_by_id(st.client_id)
  if proposal and client then
    asked[proposal.proposal_id] = true
    M.ask(client, proposal)
  end
end

--- Handler of `rutter/pinProposalsChanged` `{ workspace_ids }`: asks about each proposal not
--- asked about yet (one prompt at a time), reloads an open proposals float.
function M.on_proposals_changed(_, params, ctx)
  local client = ctx and vim.lsp.get_client_by_id(ctx.client_id)
  if not client then
    return
  end
  vim.schedule(function()
    request(client, "rutter/pin/proposals", vim.empty_dict(), function(result)
      if state and api.nvim_win_is_valid(state.win) and state.kind == "proposals" and result then
        local lines, rows, hl = M.format_proposals(result.proposals)
        render(client, "proposals", lines, rows, hl, nil)
      end
      for _, proposal in ipairs(result and result.proposals or {}) do
        if not asked[proposal.proposal_id] then
          asked[proposal.proposal_id] = true
          M.ask(client, proposal)
          break -- one prompt at a time; the answer's change brings the next
        end
      end
      api.nvim_exec_autocmds("User", {
        pattern = "RutterPinProposalsChanged",
        modeline = false,
        data = { client_id = client.id, workspace_ids = type(params) == "table" and params.workspace_ids or {} },
      })
    end)
  end)
end

--- `:RutterPins [THREAD|RUN]`: the pins of a thread (or of a run's thread).
function M.pins(subject)
  local client = client_for_current()
  if not client then
    notify("no rutter language server is running; open a file of a project first", vim.log.levels.WARN)
    return
  end
  if subject == nil or subject == "" then
    request(client, "rutter/runs", vim.empty_dict(), function(result, err)
      local runs = (not err and result and result.runs) or {}
      if #runs == 0 then
        notify("no active run: pins belong to a run's thread; give THREAD or RUN", vim.log.levels.WARN)
        return
      end
      vim.ui.select(runs, {
        prompt = "Pins of which run's thread?",
        format_item = function(run)
          return run.run_id .. "  " .. (run.goal or "")
        end,
      }, function(run)
        if run then
          M.pins(run.run_id)
        end
      end)
    end)
    return
  end
  local params = subject:sub(1, 4) == "run_" and { run_id = subject } or { thread_id = subject }
  request(client, "rutter/pin/list", params, function(result, err)
    if err then
      notify("cannot list pins: " .. err.message, vim.log.levels.ERROR)
      return
    end
    local lines, rows, hl = M.format_pins(result)
    render(client, "pins", lines, rows, hl, subject)
    state.thread_id = result.thread_id
  end)
end

local function pin_action(method, params, done)
  local st = state
  local client = st and vim.lsp.get_client_by_id(st.client_id)
  if not st or not client then
    return
  end
  local subject = st.subject
  request(client, method, params, function(result, err)
    if err then
      notify(err.message, vim.log.levels.ERROR)
    else
      notify(done .. " " .. result.pin_id)
    end
    M.pins(subject)
  end)
end

local function pin_on_cursor()
  local st = state
  if not st or not api.nvim_win_is_valid(st.win) or st.kind ~= "pins" then
    return nil
  end
  local pin = st.rows[api.nvim_win_get_cursor(st.win)[1]]
  if not pin then
    notify("no pin on this line")
  end
  return pin
end

function M.add_row()
  local st = state
  if not st or not st.thread_id then
    return
  end
  vim.ui.input({ prompt = "Pin (every later run of this thread keeps it): " }, function(text)
    if text and vim.trim(text) ~= "" then
      pin_action("rutter/pin/add", { thread_id = st.thread_id, text = text }, "pinned")
    end
  end)
end

function M.edit_row()
  local pin = pin_on_cursor()
  if not pin then
    return
  end
  vim.ui.input({ prompt = "Pin: ", default = pin.text }, function(text)
    if text and vim.trim(text) ~= "" then
      pin_action("rutter/pin/edit", { pin_id = pin.pin_id, version = pin.version, text = text }, "edited")
    end
  end)
end

function M.remove_row()
  local pin = pin_on_cursor()
  if not pin then
    return
  end
  vim.ui.select({ "Remove pin", "Keep it" }, { prompt = "Remove this pin? " .. first_line(pin.text) }, function(choice)
    if choice == "Remove pin" then
      pin_action("rutter/pin/remove", { pin_id = pin.pin_id, version = pin.version }, "removed")
    end
  end)
end

--- What the float shows (for tests and scripts), or nil.
function M.float()
  if not state or not api.nvim_win_is_valid(state.win) then
    return nil
  end
  return vim.deepcopy({ kind = state.kind, lines = state.lines })
end

function M.init()
  api.nvim_create_user_command("RutterProposals", function()
    M.proposals()
  end, { desc = "rutter: pins agents proposed, waiting for your answer" })
  api.nvim_create_user_command("RutterPins", function(opts)
    M.pins(opts.args)
  end, { nargs = "?", desc = "rutter: a thread's pins (THREAD or RUN; none: pick a run)" })
end

return M
