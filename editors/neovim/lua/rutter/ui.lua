--- What rutter's windows share: filling a read-only buffer with highlighted lines, a centred
--- size for lines that are not wrapped, read-only scratch buffers shown in a split, requests
--- answered on the main loop, and the handlers of the server's window requests
--- (lsp/rutter.lua): messages that fit the command line, documents opened beside the buffer
--- in a split, and questions answered without a "Press ENTER" prompt after them.
local M = {}

local api = vim.api

--- Who did something, as a record names it (docs/team.md, "People"): the person its transaction
--- acted for and the surface they used (`alice via cli`), or the surface alone for a record older
--- than people being recorded (`cli, person unknown`; `person` nil or vim.NIL).
--- @param surface any
--- @param person any
--- @return string
function M.who(surface, person)
  local used = (surface == nil or surface == vim.NIL) and "" or tostring(surface)
  if person == nil or person == vim.NIL then
    return used .. ", person unknown"
  end
  return tostring(person) .. " via " .. used
end

--- Replace the lines of read-only `buf`, highlighting line `lnum` with `hl[lnum]` (in `ns`).
--- @param buf integer
--- @param ns integer
--- @param lines string[]
--- @param hl table<integer, string>
function M.set_lines(buf, ns, lines, hl)
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for lnum, group in pairs(hl) do
    api.nvim_buf_set_extmark(buf, ns, lnum - 1, 0, { end_row = lnum - 1, end_col = #lines[lnum], hl_group = group })
  end
end

--- A window config centred in the editor, as wide as the longest line (at least `min_width`)
--- and as high as the lines, within the screen.
--- @param lines string[]
--- @param min_width integer
function M.geometry(lines, min_width)
  local longest = min_width
  for _, line in ipairs(lines) do
    longest = math.max(longest, vim.fn.strdisplaywidth(line))
  end
  local width = math.min(longest, math.max(20, vim.o.columns - 4))
  local height = math.min(#lines, math.max(3, vim.o.lines - vim.o.cmdheight - 4))
  return {
    relative = "editor",
    width = width,
    height = math.max(1, height),
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
  }
end

--- A read-only scratch buffer named `name` holding `lines` (the buffer of that name again when
--- it is still open; `q` closes its window), of workspace `workspace_id`.
function M.scratch(name, lines, workspace_id)
  local existing = vim.fn.bufnr("^" .. vim.fn.escape(name, "\\/.*$^~[]") .. "$")
  local buf = existing > 0 and existing or api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  pcall(api.nvim_buf_set_name, buf, name)
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  vim.bo[buf].filetype = "rutter"
  vim.b[buf].rutter_workspace_id = workspace_id
  vim.keymap.set("n", "q", "<Cmd>close<CR>", { buffer = buf, nowait = true, silent = true, desc = "rutter: close" })
  return buf
end

--- Show `buf` in a split (`vertical`: at the right; else below), or go to its window when it
--- is shown already; the window.
function M.show_in_split(buf, vertical)
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    api.nvim_set_current_win(win)
    return win
  end
  vim.cmd(vertical and "botright vsplit" or "belowright split")
  win = api.nvim_get_current_win()
  api.nvim_win_set_buf(win, buf)
  return win
end

-- -- the server's window/* requests -----------------------------------------------------------

local LEVELS = {
  [1] = vim.log.levels.ERROR,
  [2] = vim.log.levels.WARN,
  [3] = vim.log.levels.INFO,
  [4] = vim.log.levels.DEBUG,
}

--- Draw `lines` in the list float of `st` (`st.win`, `st.buf`), opening it on first use with
--- `opts.title` and `opts.keymaps(buf)`; `opts.closed(win)` runs when that window closes. The
--- cursor starts on the first row that names an item (`rows`) on a first draw (`st.result`
--- nil), else stays where it was. Sets `st.rows` and `st.lines`.
--- @param st table
--- @param ns integer
--- @param lines string[]
--- @param rows table<integer, any>
--- @param hl table
--- @param opts { title: string, min_width: integer, keymaps: fun(buf: integer), closed: fun(win: integer) }
function M.draw_list(st, ns, lines, rows, hl, opts)
  local api = vim.api
  if not (st.win and api.nvim_win_is_valid(st.win) and st.buf and api.nvim_buf_is_valid(st.buf)) then
    local buf = api.nvim_create_buf(false, true) -- buftype=nofile: no LSP client attaches
    vim.bo[buf].bufhidden = "wipe"
    vim.bo[buf].swapfile = false
    local config = M.geometry(lines, opts.min_width)
    config.style = "minimal"
    config.border = "rounded"
    config.title = opts.title
    config.title_pos = "center"
    local win = api.nvim_open_win(buf, true, config)
    vim.wo[win].cursorline = true
    vim.bo[buf].filetype = "rutter"
    opts.keymaps(buf)
    st.win, st.buf = win, buf
    api.nvim_create_autocmd("WinClosed", {
      pattern = tostring(win),
      once = true,
      callback = function()
        opts.closed(win)
      end,
    })
  end
  local cursor = api.nvim_win_get_cursor(st.win)
  M.set_lines(st.buf, ns, lines, hl)
  api.nvim_win_set_config(st.win, M.geometry(lines, opts.min_width))
  local first = nil
  for lnum = 1, #lines do
    if rows[lnum] then
      first = lnum
      break
    end
  end
  local row = (st.result == nil and first) or math.min(cursor[1], #lines)
  api.nvim_win_set_cursor(st.win, { row, 0 })
  st.rows, st.lines = rows, lines
end

--- `text` on one line that fits the command line (`v:echospace`), ending in "…" if cut.
--- @param text string
--- @return string
function M.fit(text)
  text = text:gsub("%s*\n%s*", " ")
  local room = math.max(20, vim.v.echospace)
  if vim.fn.strdisplaywidth(text) <= room then
    return text
  end
  local cut = text
  while vim.fn.strdisplaywidth(cut) > room - 1 do
    cut = vim.fn.strcharpart(cut, 0, vim.fn.strchars(cut) - 1)
  end
  return cut .. "…"
end

--- `client:request` with the answer delivered on the main loop as `callback(err, result)`; a
--- stopped server answers (on the main loop too) with an error saying so.
function M.request(client, method, params, callback)
  local ok = client:request(method, params, function(err, result)
    vim.schedule(function()
      callback(err, result)
    end)
  end)
  if not ok then
    vim.schedule(function()
      callback({ message = "the rutter language server has stopped" }, nil)
    end)
  end
end

--- The typed error of a failed request as a table `{ code, message }`.
function M.error_of(err)
  if type(err) ~= "table" then
    return { code = "request_failed", message = tostring(err) }
  end
  if type(err.data) == "table" and type(err.data.code) == "string" then
    return err.data
  end
  return { code = "request_failed", message = err.message or vim.inspect(err) }
end

--- `vim.notify("rutter: " .. message)`; information is cut to fit the command line (a longer
--- line would end in a "Press ENTER" prompt), warnings and errors are shown whole.
function M.notify(message, level)
  level = level or vim.log.levels.INFO
  local text = "rutter: " .. message
  if level <= vim.log.levels.INFO then
    text = M.fit(text)
  end
  vim.notify(text, level)
end

--- The full text of the server's recent messages, newest last (a shown message may be cut
--- to fit the command line; errors and warnings are never cut).
M.messages = {} --- @type { type: integer, message: string }[]
local MAX_KEPT = 50

--- `window/showMessage`: errors and warnings in full through `vim.notify` (they are to be read
--- even if that takes a prompt); information on one line that fits the command line, so that
--- the end of a confirmation is not a "Press ENTER" prompt. The server's messages name rutter
--- themselves, so no `LSP[rutter]` prefix is added.
function M.show_message(_, params, ctx)
  if type(params) ~= "table" or type(params.message) ~= "string" then
    return vim.NIL
  end
  local kind = params.type or 4
  table.insert(M.messages, { type = kind, message = params.message })
  if #M.messages > MAX_KEPT then
    table.remove(M.messages, 1)
  end
  local level = LEVELS[kind] or vim.log.levels.INFO
  local text = params.message
  if not vim.startswith(text, "rutter") then
    local client = ctx and vim.lsp.get_client_by_id(ctx.client_id)
    text = (client and client.name or "rutter") .. ": " .. text
  end
  if level <= vim.log.levels.INFO then
    text = M.fit(text)
  end
  vim.notify(text, level)
  return vim.NIL
end

--- After a choice in Neovim's own list (vim.ui.select's default, `inputlist()`), the screen
--- has scrolled: the next message would end in a "Press ENTER" prompt. Redraw first.
local function settle()
  if #api.nvim_list_uis() > 0 then
    vim.cmd("redraw")
  end
end

--- `window/showMessageRequest`: the question through `vim.ui.select` (the server's message as
--- the prompt, its actions as the items); dismissing it answers null. Runs in the coroutine
--- the client gives server requests, as Neovim's own handler does.
function M.show_message_request(_, params)
  local actions = type(params) == "table" and params.actions or {}
  local co, is_main = coroutine.running()
  if not co or is_main then
    return vim.lsp.handlers["window/showMessageRequest"](nil, params, {})
  end
  vim.ui.select(actions, {
    prompt = M.fit_prompt(params.message or ""),
    kind = "rutter_question",
    format_item = function(action)
      return (action.title:gsub("\r?\n", " "))
    end,
  }, function(choice)
    vim.schedule(function()
      settle()
      coroutine.resume(co, choice or vim.NIL)
    end)
  end)
  return coroutine.yield()
end

--- The prompt of a question: the message, then ": ".
function M.fit_prompt(message)
  return message:gsub("%s+$", "") .. ": "
end

local document_win = nil --- @type integer? the split the last document went to

--- The window a document from the server goes to: the split the previous one went to, when
--- it is still open in this tab and is not the current window, else a new split below the
--- current window, so the buffer you are in stays in its window.
local function window_for()
  local current = api.nvim_get_current_win()
  local win = document_win
  if win and api.nvim_win_is_valid(win) and win ~= current
      and api.nvim_win_get_tabpage(win) == api.nvim_get_current_tabpage() then
    return win
  end
  vim.cmd("belowright split")
  win = api.nvim_get_current_win()
  api.nvim_set_current_win(current)
  document_win = win
  return win
end

--- `window/showDocument`: open the document in a split (see `window_for`) instead of in place
--- of the current buffer; external URIs go to Neovim's own handler (the system opener).
function M.show_document(err, params, ctx)
  if type(params) ~= "table" or params.external or type(params.uri) ~= "string" then
    return vim.lsp.handlers["window/showDocument"](err, params, ctx)
  end
  local path = vim.uri_to_fname(params.uri)
  local from = api.nvim_get_current_win()
  local buf = vim.fn.bufadd(path)
  vim.bo[buf].buflisted = true
  local shown = vim.fn.bufwinid(buf)
  local win = shown ~= -1 and shown or window_for()
  api.nvim_win_set_buf(win, buf)
  vim.fn.bufload(buf)
  local range = params.selection
  if type(range) == "table" and type(range.start) == "table" then
    pcall(api.nvim_win_set_cursor, win, { range.start.line + 1, range.start.character })
  end
  api.nvim_set_current_win(params.takeFocus and win or from)
  api.nvim_exec_autocmds("User", {
    pattern = "RutterDocumentShown",
    modeline = false,
    data = { uri = params.uri, win = win, buf = buf },
  })
  return { success = true }
end

return M
