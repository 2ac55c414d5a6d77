--- `:RutterContext [budget]`: the current run's assembled context (`rutter/contextAssemble`).
---
--- The assembly (stored in the run's audit by the server) opens read-only in a split
--- (`rutter://context/<run_ID>`, `q` closes it): the budget, then every entry in authority order,
--- included or omitted with its reason. The delivered texts are not repeated.
---
--- When the required context (pinned instructions, pins, the latest summary) does not fit the
--- budget, nothing is delivered: the `context_overflow` error is shown with its figures (the
--- budget, the tokens needed, each required source with its tokens) and the fixes are offered
--- through `vim.ui.select`: "Remove pins…" (a `vim.ui.select` of the required pins; the chosen
--- one is removed with `rutter/pin/remove`, then the context is assembled again with the same
--- budget, which offers the fixes again while it still overflows) and "Raise budget…"
--- (`vim.ui.input`; assembled again with the new budget). Every outcome fires
--- `User RutterContext` with data `{ result?, error? }`.
local M = {}

local api = vim.api

M.REMOVE_PINS = "Remove pins…"
M.RAISE_BUDGET = "Raise budget…"
M.MAX_BUDGET = 1000000
M.last_error = nil --- @type string?

local function notify(message, level)
  require("rutter.ui").notify(message, level)
end

local function fire(data)
  api.nvim_exec_autocmds("User", { pattern = "RutterContext", modeline = false, data = data })
end

local function str(value)
  return value == nil and "" or tostring(value)
end

--- The figures of a `context_overflow` error `{ budget, needed, required }`, or nil.
function M.overflow_of(e)
  if type(e) ~= "table" or e.code ~= "context_overflow" or type(e.details) ~= "table" then
    return nil
  end
  local d = e.details
  if type(d.budget) ~= "number" or type(d.needed) ~= "number" or type(d.required) ~= "table" then
    return nil
  end
  return { budget = d.budget, needed = d.needed, required = d.required }
end

--- The overflow in words: the figures, each required source, the fixes.
function M.overflow_text(run_id, overflow)
  local sources, pins = {}, false
  for _, source in ipairs(overflow.required) do
    sources[#sources + 1] = string.format("%s %s (%d tokens)", str(source.kind), str(source.id), tonumber(source.tokens) or 0)
    pins = pins or source.kind == "pin"
  end
  return string.format(
    "the required context of run %s needs %d tokens and the budget is %d; nothing is delivered rather than "
      .. "leaving out an instruction or a pin. Required: %s. Fix: %sraise the budget, choose a model with a larger window",
    run_id,
    overflow.needed,
    overflow.budget,
    table.concat(sources, ", "),
    pins and "remove pins, " or ""
  )
end

--- The fixes offered for an overflow, in order.
function M.fixes(overflow)
  for _, source in ipairs(overflow.required) do
    if source.kind == "pin" then
      return { M.REMOVE_PINS, M.RAISE_BUDGET }
    end
  end
  return { M.RAISE_BUDGET }
end

local function entry_line(entry)
  local scope = entry.scope ~= nil and entry.scope ~= vim.NIL and (" (" .. str(entry.scope) .. ")") or ""
  local tokens = type(entry.tokens) == "number" and (entry.tokens .. " tokens") or "not read"
  local head = string.format("%s %s v%s%s · %s", str(entry.kind), str(entry.id), str(entry.version), scope, tokens)
  if entry.decision == "included" then
    return "  included: " .. head
  end
  return "  omitted:  " .. head .. " — " .. str(entry.reason)
end

--- The assembly view's lines.
function M.lines(assembly)
  local budget = type(assembly.budget) == "table" and assembly.budget or {}
  local lines = {
    string.format("Assembled context of run %s (%s, %s by %s)", str(assembly.run_id), str(assembly.assembly_id),
      str(assembly.created_at), require("rutter.ui").who(assembly.created_by, assembly.created_by_person)),
    string.format("Budget: %s of %s tokens used (required context %s; memory sub-budget %s)", str(budget.used),
      str(budget.background), str(budget.required), str(budget.memory)),
    "",
  }
  for _, entry in ipairs(type(assembly.entries) == "table" and assembly.entries or {}) do
    lines[#lines + 1] = entry_line(entry)
  end
  for _, warning in ipairs(type(assembly.warnings) == "table" and assembly.warnings or {}) do
    lines[#lines + 1] = "warning: " .. str(warning.message or vim.inspect(warning))
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "fingerprint " .. str(assembly.fingerprint)
  return lines
end

local function show(assembly, workspace_id)
  local ui = require("rutter.ui")
  local buf = ui.scratch("rutter://context/" .. str(assembly.run_id), M.lines(assembly), workspace_id)
  ui.show_in_split(buf, false)
  return buf
end

local assemble

--- "Remove pins…": pick one required pin, remove it, assemble again with the same budget.
local function remove_pin(client, run_id, overflow, workspace_id)
  local session = require("rutter.session")
  local tokens = {}
  for _, source in ipairs(overflow.required) do
    if source.kind == "pin" then
      tokens[source.id] = tonumber(source.tokens) or 0
    end
  end
  session.call(client, "rutter/pin/list", { run_id = run_id }, function(err, listed)
    if err then
      return session.show_error("cannot list the pins of run " .. run_id, err)
    end
    local pins = {}
    for _, pin in ipairs(type(listed) == "table" and listed.pins or {}) do
      if tokens[pin.pin_id] then
        pins[#pins + 1] = pin
      end
    end
    vim.ui.select(pins, {
      prompt = "rutter: remove which pin? ",
      kind = "rutter_pin",
      format_item = function(pin)
        local first = (str(pin.text):match("^[^\n]*") or ""):sub(1, 60)
        return string.format("%s · %d tokens · %s", pin.pin_id, tokens[pin.pin_id], first)
      end,
    }, function(pin)
      if not pin then
        return
      end
      vim.schedule(function()
        session.call(client, "rutter/pin/remove", { pin_id = pin.pin_id, version = pin.version }, function(rerr)
          if rerr then
            return session.show_error(pin.pin_id .. " was not removed", rerr)
          end
          notify("removed " .. pin.pin_id .. "; assembling the context of run " .. run_id .. " again")
          assemble(client, run_id, overflow.budget, workspace_id)
        end)
      end)
    end)
  end)
end

--- "Raise budget…": ask the budget (the tokens needed offered), assemble again with it.
local function raise_budget(client, run_id, overflow, workspace_id)
  vim.ui.input({
    prompt = string.format("Budget of run %s in tokens (needs %d, was %d): ", run_id, overflow.needed, overflow.budget),
    default = tostring(math.min(M.MAX_BUDGET, math.max(overflow.needed, overflow.budget + 1))),
  }, function(text)
    if text == nil then
      return
    end
    local budget = tonumber(vim.trim(text))
    vim.schedule(function()
      if not budget or budget ~= math.floor(budget) or budget < 1 or budget > M.MAX_BUDGET then
        return notify("the budget is a whole number of tokens, 1-" .. M.MAX_BUDGET, vim.log.levels.ERROR)
      end
      assemble(client, run_id, budget, workspace_id)
    end)
  end)
end

--- Assemble `run_id`'s context (`budget` nil: the server's default) and show it.
assemble = function(client, run_id, budget, workspace_id)
  local session = require("rutter.session")
  local params = { run_id = run_id }
  if budget then
    params.budget = budget
  end
  session.call(client, "rutter/contextAssemble", params, function(err, result)
    if err then
      local e = session.error_of(err)
      local overflow = M.overflow_of(e)
      local text = overflow and M.overflow_text(run_id, overflow)
        or string.format("cannot assemble the context of run %s: %s [%s]", run_id, str(e.message), str(e.code))
      M.last_error = text
      notify(text, vim.log.levels.ERROR)
      fire({ error = e })
      if overflow then
        vim.ui.select(M.fixes(overflow), { prompt = "rutter: fix the overflow of run " .. run_id .. ": " }, function(choice)
          if choice == M.REMOVE_PINS then
            vim.schedule(function()
              remove_pin(client, run_id, overflow, workspace_id)
            end)
          elseif choice == M.RAISE_BUDGET then
            vim.schedule(function()
              raise_budget(client, run_id, overflow, workspace_id)
            end)
          end
        end)
      end
      return
    end
    M.last_error = nil
    local buf = show(result, workspace_id)
    fire({ result = result, buf = buf })
  end)
end
M.assemble = assemble

--- `:RutterContext [budget]`: the current run's assembled context.
function M.context(budget)
  require("rutter.session").current_run(function(client, run_id, workspace_id)
    assemble(client, run_id, budget, workspace_id)
  end)
end

function M.init()
  api.nvim_create_user_command("RutterContext", function(opts)
    local budget = nil
    if opts.args ~= "" then
      budget = tonumber(opts.args)
      if not budget then
        return notify(":RutterContext [BUDGET]: the budget is a number of tokens", vim.log.levels.ERROR)
      end
    end
    M.context(budget)
  end, { nargs = "?", desc = "rutter: the current run's assembled context" })
end

return M
