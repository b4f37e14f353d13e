//! [`Output`]: the buffer a session writes result messages into.
//!
//! Rows are encoded straight into the connection's send buffer: a session
//! calls [`Output::begin_row`], appends each field, and [`Output::end_row`]
//! patches the message length. No per-row allocation happens on this path.

use bytes::{BufMut, BytesMut};

/// The connection's pending output; flushed by the wire layer.
#[derive(Debug, Default)]
pub struct Output {
    buf: BytesMut,
    row_start: usize,
    rows: u64,
}

impl Output {
    /// An empty output buffer.
    pub fn new() -> Output {
        Output::default()
    }

    /// Starts a DataRow with `columns` fields.
    pub fn begin_row(&mut self, columns: usize) {
        self.row_start = self.buf.len();
        self.buf.put_u8(b'D');
        self.buf.put_u32(0);
        self.buf.put_u16(columns as u16);
    }

    /// Appends a NULL field.
    pub fn null_field(&mut self) {
        self.buf.put_i32(-1);
    }

    /// Appends a field with `bytes` as its value.
    pub fn field(&mut self, bytes: &[u8]) {
        self.buf.put_i32(bytes.len() as i32);
        self.buf.put_slice(bytes);
    }

    /// Appends a field whose value `write` appends to the buffer; the length
    /// prefix is patched afterwards.
    pub fn field_with(&mut self, write: impl FnOnce(&mut BytesMut)) {
        let len_at = self.buf.len();
        self.buf.put_i32(0);
        write(&mut self.buf);
        let len = (self.buf.len() - len_at - 4) as i32;
        self.buf[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
    }

    /// Finishes the DataRow started by [`Output::begin_row`].
    pub fn end_row(&mut self) {
        let len = (self.buf.len() - self.row_start - 1) as u32;
        self.buf[self.row_start + 1..self.row_start + 5].copy_from_slice(&len.to_be_bytes());
        self.rows += 1;
    }

    /// Sends CopyOutResponse for COPY TO STDOUT: overall format 0 for text
    /// and CSV, 1 for binary, and the same for every column.
    pub fn copy_out_start(&mut self, columns: usize, binary: bool) {
        self.buf.put_u8(b'H');
        self.buf.put_u32(4 + 1 + 2 + 2 * columns as u32);
        self.buf.put_u8(binary as u8);
        self.buf.put_u16(columns as u16);
        for _ in 0..columns {
            self.buf.put_u16(binary as u16);
        }
    }

    /// Sends one CopyData message.
    pub fn copy_data(&mut self, data: &[u8]) {
        self.buf.put_u8(b'd');
        self.buf.put_u32(4 + data.len() as u32);
        self.buf.put_slice(data);
    }

    /// Sends CopyDone.
    pub fn copy_done(&mut self) {
        self.buf.put_u8(b'c');
        self.buf.put_u32(4);
    }

    /// DataRows written so far (for the wire layer's bookkeeping).
    pub fn rows_written(&self) -> u64 {
        self.rows
    }

    /// Bytes waiting to be sent.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True if nothing is waiting to be sent.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The raw buffer, for the wire layer to add its own messages and flush.
    pub fn buffer(&mut self) -> &mut BytesMut {
        &mut self.buf
    }
}
