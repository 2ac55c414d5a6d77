--- `:RutterCompact [focus]`: compact the current run's thread (`rutter/session/compact`); `C`
--- in `:RutterTree` compacts the thread of the node on its line.
---
--- The focus is asked (`vim.ui.input`; empty for none) when not given. The extractive
--- summarizer runs (no model); the newest 4 messages stay verbatim and nothing is deleted.
--- On success the summary opens read-only in a split (`rutter://compaction/<cmp_ID>`, `q`
--- closes it); a failure is shown with its code (`nothing_to_compact`, `compaction_in_progress`,
--- `compaction_pending`, ...) and what to do next; `compaction_pending` offers "Abandon" and
--- "Retry" (`vim.ui.select`), which resolve it (`rutter/session/compactionResolve`) with its
--- operation key. Every outcome fires `User RutterCompaction` with data `{ result?, error? }`.
--- Completed compactions show in `:RutterTree` as projected `≡ compaction` nodes.
local M = {}

local api = vim.api

M.last_error = nil --- @type string?

local function fire(data)
  api.nvim_exec_autocmds("User", { pattern = "RutterCompaction", modeline = false, data = data })
end

--- The summary view's lines: a header, then the summary as stored.
function M.lines(result)
  local lines = {
    string.format("Compaction %s of thread %s (%s, %s)", tostring(result.compaction_id),
      tostring(result.thread_id), tostring(result.summarizer), tostring(result.status)),
    string.format("%d older messages summarized (%d not read); the newest %d kept verbatim",
      tonumber(result.compacted_message_count) or 0, tonumber(result.unread_message_count) or 0,
      type(result.kept_message_ids) == "table" and #result.kept_message_ids or 0),
    "operation key: " .. tostring(result.operation_key),
    "",
  }
  local summary = type(result.summary) == "table" and result.summary.text or ""
  for _, line in ipairs(vim.split(tostring(summary), "\n", { plain = true })) do
    lines[#lines + 1] = line
  end
  return lines
end

local function show(result, workspace_id)
  local ui = require("rutter.ui")
  local buf = ui.scratch("rutter://compaction/" .. tostring(result.compaction_id), M.lines(result), workspace_id)
  ui.show_in_split(buf, false)
  return buf
end

--- What to do after each refusal of a compaction.
M.HINTS = {
  nothing_to_compact = "a compaction keeps the newest 4 messages verbatim: compact again once the thread has more",
  compaction_in_progress = "wait for it to finish; its summary then shows in :RutterTree",
  compaction_pending = "abandon it (nothing is stored) or retry it (the summarizer is called again on the same messages)",
  summarizer_failed = "nothing was stored and the previous summary stays the latest: compact again",
  thread_changed = "messages arrived while it ran: nothing was stored; compact again",
  compaction_not_pending = "it was resolved meanwhile: compact again if the thread still needs it",
}
M.ABANDON = "Abandon"
M.RETRY = "Retry"

--- The refusal as one line: what happened, its code, and what to do next.
function M.error_text(thread_id, e)
  local text = string.format("no compaction of %s: %s [%s]", thread_id, tostring(e.message), tostring(e.code))
  local hint = M.HINTS[e.code]
  return hint and (text .. "; " .. hint) or text
end

local function send(client, method, params, thread_id, workspace_id, on_done)
  local session = require("rutter.session")
  session.call(client, session.PREFIX .. method, params, function(err, result)
    if err then
      local e = session.error_of(err)
      local text = M.error_text(thread_id, e)
      M.last_error = text
      require("rutter.ui").notify(text, vim.log.levels.ERROR)
      local key = type(e.details) == "table" and e.details.operation_key or nil
      if e.code == "compaction_pending" and type(key) == "string" then
        vim.ui.select({ M.ABANDON, M.RETRY }, { prompt = "rutter: compaction " .. key .. " is pending: " }, function(choice)
          if choice == M.ABANDON or choice == M.RETRY then
            vim.schedule(function()
              local action = choice == M.ABANDON and "abandon" or "retry"
              require("rutter.ui").notify(action .. " compaction " .. key .. "…")
              send(client, "compactionResolve", { operation_key = key, action = action }, thread_id, workspace_id, on_done)
            end)
          end
        end)
      end
      fire({ error = e })
      return on_done and on_done(nil)
    end
    M.last_error = nil
    if result.status ~= "completed" then
      require("rutter.ui").notify(string.format("compaction %s of %s is %s; nothing was stored",
        tostring(result.compaction_id), thread_id, tostring(result.status)))
      fire({ result = result })
      return on_done and on_done(result)
    end
    local buf = show(result, workspace_id)
    fire({ result = result, buf = buf })
    return on_done and on_done(result)
  end)
end

--- Compact `thread_id` with `focus` (nil: none), then show the summary; `on_done(result?)`.
function M.compact_thread(client, thread_id, focus, workspace_id, on_done)
  local params = { thread_id = thread_id }
  if focus and vim.trim(focus) ~= "" then
    params.focus = focus
  end
  require("rutter.ui").notify("compacting " .. thread_id .. "…")
  send(client, "compact", params, thread_id, workspace_id, on_done)
end

--- Ask the focus, then compact `thread_id` (nothing when the prompt is dismissed).
function M.ask_and_compact(client, thread_id, workspace_id, on_done)
  vim.ui.input({ prompt = "Compaction focus (empty for none): " }, function(text)
    if text == nil then
      return
    end
    vim.schedule(function()
      M.compact_thread(client, thread_id, text, workspace_id, on_done)
    end)
  end)
end

--- `:RutterCompact [focus]`: the current run's thread.
function M.compact(focus)
  local session = require("rutter.session")
  session.current_run(function(client, _, workspace_id, run)
    local thread_id = type(run) == "table" and run.thread_id or nil
    if type(thread_id) ~= "string" then
      return require("rutter.ui").notify("the current run names no thread", vim.log.levels.WARN)
    end
    if focus ~= nil then
      return M.compact_thread(client, thread_id, focus, workspace_id)
    end
    M.ask_and_compact(client, thread_id, workspace_id)
  end)
end

function M.init()
  api.nvim_create_user_command("RutterCompact", function(opts)
    M.compact(opts.args ~= "" and opts.args or nil)
  end, { nargs = "?", desc = "rutter: compact the current run's thread" })
end

return M
