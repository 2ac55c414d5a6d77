-- :RutterCandidates as a person drives it: the list, <CR> to read the exact text, `c` answered
-- "Cancel" then "Confirm and Save to Project", a note with a secret cut out asking before it
-- is saved redacted, and `x` to ignore.
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local api = vim.api

local TARGET = "services/api/internal/parser/input.go"

local events = {}
api.nvim_create_autocmd("User", {
  pattern = "RutterCandidates",
  callback = function(args)
    local data = args.data or {}
    events[#events + 1] = { action = data.action, id = data.id, error = data.error, result = data.result }
  end,
})

--- Run `fn`, wait for the next event of `action` (and, with `relisted`, the list after it).
local function after(action, fn, relisted)
  local before = #events
  fn()
  local found
  H.wait("a " .. action .. " outcome", function()
    for index = before + 1, #events do
      if events[index].action == action then
        found = index
        break
      end
    end
    if not found or not relisted then
      return found
    end
    for index = found + 1, #events do
      if events[index].action == "list" then
        return true
      end
    end
  end)
  return events[found]
end

local function candidates()
  return require("rutter.candidates")
end

local function cursor_on(id)
  local f = assert(candidates().float(), "the candidates float is open")
  local lines = {}
  for lnum, row_id in pairs(f.rows) do
    if row_id == id then
      lines[#lines + 1] = lnum
    end
  end
  table.sort(lines)
  assert(lines[1], "no row for " .. id)
  api.nvim_win_set_cursor(f.win, { lines[1], 0 })
end

H.run(function(R)
  require("rutter").setup({})
  local source = H.edit(TARGET)
  H.attached(source)

  R.first = after("list", function()
    vim.cmd("RutterCandidates")
  end).result
  R.first_lines = candidates().float().lines

  local by_content = {}
  for _, item in ipairs(R.first.items) do
    by_content[item.content] = item
  end
  local plain = assert(by_content[vim.env.RUTTER_NVIM_PLAIN], "the plain candidate is listed")
  cursor_on(plain.candidate_id)
  R.expanded = after("list", function()
    H.press("<CR>")
  end).result and candidates().float().lines

  local asked = {}
  local answers = { "Cancel", "Confirm and Save to Project", "Confirm and Save to Project", "Store with the secrets redacted" }
  vim.ui.select = function(items, opts, on_choice)
    asked[#asked + 1] = { prompt = opts.prompt, items = items }
    local wanted = table.remove(answers, 1)
    for index, item in ipairs(items) do
      if item == wanted then
        return on_choice(item, index)
      end
    end
    on_choice(nil, nil)
  end

  cursor_on(plain.candidate_id)
  R.cancelled = after("cancel", function()
    H.press("c")
  end)
  cursor_on(plain.candidate_id)
  R.confirmed = after("confirm", function()
    H.press("c")
  end, true)

  local secret = nil
  for _, item in ipairs(R.first.items) do
    if item.redacted then
      secret = item
    end
  end
  cursor_on(assert(secret).candidate_id)
  R.redacted = after("confirm", function()
    H.press("c")
  end, true)

  local rest = candidates().float().result.items
  R.before_ignore = #rest
  cursor_on(rest[1].candidate_id)
  R.ignored = after("ignore", function()
    H.press("x")
  end, true)
  R.after_ignore = candidates().float().result
  R.asked = asked
end)
