-- :RutterMemory as a user drives it: the list, `a` + `:w` to add, `e` + `:w` to edit, a
-- conflicting edit from the CLI shown as an error, `d` to disable and enable, `D` answered
-- "Cancel" and then "Delete permanently" in the server's question (vim.ui.select).
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local api = vim.api

local TARGET = "services/api/internal/parser/input.go"

local events = {}
api.nvim_create_autocmd("User", {
  pattern = "RutterMemory",
  callback = function(args)
    local data = args.data or {}
    events[#events + 1] = { action = data.action, id = data.id, version = data.version, error = data.error, result = data.result }
  end,
})

--- Run `fn` and wait for the next `User RutterMemory` event of `action` (and, with
--- `relisted`, for the list the plugin reloads after it); return that event.
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

local function memory()
  return require("rutter.memory")
end

local function open_list()
  return after("list", function()
    vim.cmd("RutterMemory")
  end).result
end

--- Put the float's cursor on the row of memory `id`.
local function cursor_on(id)
  local f = assert(memory().float(), "the memory float is open")
  for lnum, row_id in pairs(f.rows) do
    if row_id == id then
      api.nvim_win_set_cursor(f.win, { lnum, 0 })
      return lnum
    end
  end
  error("no row for " .. id)
end

local function lines_of(buf)
  return api.nvim_buf_get_lines(buf, 0, -1, false)
end

H.run(function(R)
  require("rutter").setup({})
  local source = H.edit(TARGET)
  H.attached(source)
  local source_win = api.nvim_get_current_win()

  -- 1. The list: the user memory and the workspace's project memory made before Neovim.
  R.first_list = open_list()
  R.first_lines = memory().float().lines
  R.float_focused = api.nvim_get_current_win() == memory().float().win

  -- 2. `a`: a new project memory in a scratch buffer, created by `:w`.
  H.press("a")
  local draft = api.nvim_get_current_buf()
  R.new_draft = { name = api.nvim_buf_get_name(draft), buftype = vim.bo[draft].buftype, lines = lines_of(draft) }
  api.nvim_buf_set_lines(draft, 0, -1, false, { "Use table tests", "", "Prefer table-driven tests", "in Go." })
  local created = after("create", function()
    vim.cmd.write()
  end)
  R.created = created.result
  R.created_buffer = { name = api.nvim_buf_get_name(draft), modified = vim.bo[draft].modified }
  local id = created.id
  vim.cmd("bwipeout")
  api.nvim_set_current_win(source_win)

  -- 3. `e` on its row: edit the content, `:w` saves version 2.
  open_list()
  R.row_of_created = cursor_on(id)
  H.press("e")
  local edit = api.nvim_get_current_buf()
  R.edit_lines = lines_of(edit)
  api.nvim_buf_set_lines(edit, 2, -1, false, { "Prefer table-driven tests in Go,", "with t.Run per case." })
  R.saved = after("edit", function()
    vim.cmd.write()
  end)
  R.saved_modified = vim.bo[edit].modified

  -- 4. Someone else edits it meanwhile (the CLI); this buffer still says version 2.
  local cli = vim.system({
    vim.env.RUTTER_NVIM_PYTHON, "-m", "rutter", "context", "memory", "edit", id,
    "--version", "2", "--title", "Use table tests (changed elsewhere)", "--json",
  }, { text = true }):wait(30000)
  R.cli = { code = cli.code, stdout = cli.stdout, stderr = cli.stderr }
  api.nvim_buf_set_lines(edit, 2, -1, false, { "This would overwrite the other edit." })
  R.conflict = after("edit", function()
    vim.cmd.write()
  end)
  R.conflict_modified = vim.bo[edit].modified
  R.conflict_draft_version = memory().draft(edit).version
  R.last_error = memory().last_error
  vim.cmd("bwipeout!")
  api.nvim_set_current_win(source_win)

  -- 5. `d` disables, `d` again enables.
  open_list()
  cursor_on(id)
  R.disabled = after("status", function()
    H.press("d")
  end, true)
  R.disabled_lines = memory().float().lines
  cursor_on(id)
  R.enabled = after("status", function()
    H.press("d")
  end, true)

  -- 6. `D` on the user memory: the server asks; "Cancel" keeps it, "Delete permanently" not.
  local asked = {}
  local answers = { "Cancel", "Delete permanently" }
  vim.ui.select = function(items, opts, on_choice)
    local titles = {}
    for _, item in ipairs(items) do
      titles[#titles + 1] = opts.format_item and opts.format_item(item) or tostring(item)
    end
    asked[#asked + 1] = { prompt = opts.prompt, items = titles, kind = opts.kind }
    local wanted = table.remove(answers, 1)
    for index, title in ipairs(titles) do
      if title == wanted then
        return on_choice(items[index], index)
      end
    end
    on_choice(nil, nil)
  end
  local user_id = vim.env.RUTTER_NVIM_USER_MEMORY
  cursor_on(user_id)
  R.cancelled = after("delete", function()
    H.press("D")
  end, true)
  cursor_on(user_id)
  R.deleted = after("delete", function()
    H.press("D")
  end, true)
  R.asked = asked
  R.final_lines = memory().float().lines
  R.final_ids = vim.tbl_values(memory().float().rows)
end)
