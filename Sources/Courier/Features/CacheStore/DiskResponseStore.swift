import CourierSupport
import Foundation

/// The disk tier of ``CacheStore``: a directory of entries in ``CacheEntryFormat`` (a small
/// head file per key, and an immutable body file for bodies too large to live inline).
///
/// Crash safety: every file is written under a temporary name (`courier-<uuid>.tmp`, locked with
/// `flock` by its writer) and renamed into place, body first, head last, so a reader, another cache
/// on the directory or a later process sees the old entry or the new one, never a torn one; a
/// process killed mid-write leaves only an unlocked temporary file or an unreferenced body file,
/// which the next ``scan(capacity:target:now:)`` removes. Files are not `fsync`ed: a kill cannot
/// tear them, and after a power loss the length and checksum checks turn a damaged file into a miss.
///
/// Recency: a head file's modification time is the entry's last use (set on every write and hit),
/// shared by every process on the directory, so eviction needs no shared index.
///
/// The directory is input too: no file is read or written through a link, no FIFO or device is
/// opened for long enough to block, and only regular files this user owns are used
/// (``CacheFileIO``); anything else under a store file's name is a miss, and the next write or
/// scan replaces or removes the name (never what it points to). A directory that is not this
/// user's is not used at all (``CacheDirectoryGuard``).
///
/// Every method does file I/O on the caller's thread and never throws: the disk tier is best
/// effort and a failure only means a miss or an entry not stored.
struct DiskResponseStore: Sendable {
    /// The largest head file read (metadata plus an inline body).
    static let maximumHeadFileSize = 8 << 20

    let directory: URL
    /// Temporary files to reuse instead of creating new ones (see ``CacheSpareFiles``).
    let spares = CacheSpareFiles()
    /// Whether the directory may be used at all.
    let directoryGuard: CacheDirectoryGuard

    init(directory: URL) {
        self.directory = directory
        directoryGuard = CacheDirectoryGuard(directory)
    }

    /// A body file being published: a locked temporary file in the directory holding the body
    /// format's magic, `length` body bytes and their block checksums (``CacheBodyChecksums``).
    struct SpilledBody {
        let url: URL
        let descriptor: Int32
        let length: Int64
        let blockSums: [UInt64]
    }

    func url(_ name: String) -> URL {
        directory.appendingPathComponent(name, isDirectory: false)
    }

    func headURL(for key: ResponseCacheKey) -> URL {
        url(CacheEntryFormat.headFileName(key))
    }

    // MARK: Reading

    /// The entry stored for `key`, with its body file open, or `nil`. A head or body that fails
    /// its checks is removed. A hit marks the entry used at `touchingAt`.
    func read(_ key: ResponseCacheKey, touchingAt now: Date?) -> StoredEntry? {
        guard directoryGuard.mayRead() else { return nil }
        // Another writer may replace the entry between reading its head and opening the body
        // that head names (and remove that body): the new head is then read. Bounded, as a
        // writer on the same key could keep replacing it.
        for _ in 0..<3 {
            switch readOnce(key, touchingAt: now) {
            case .found(let entry): return entry
            case .missing: return nil
            case .replacedMeanwhile: continue
            }
        }
        return nil
    }

    /// What one attempt of ``read(_:touchingAt:)`` found.
    enum ReadAttempt {
        case found(StoredEntry)
        case missing
        /// The head named a body that was gone or damaged, and another head has replaced it since.
        case replacedMeanwhile
    }

    func readOnce(_ key: ResponseCacheKey, touchingAt now: Date?) -> ReadAttempt {
        let headURL = headURL(for: key)
        guard let (head, headFile) = readHeadFile(at: headURL), head.metadata.key == key.rawValue else { return .missing }
        return entry(key, from: head, readFrom: headFile, touchingAt: now)
    }

    /// The entry `head` (read from the file `headFile` at `key`'s head URL) describes, its body
    /// opened. A body that is gone or damaged makes the entry unusable: its head is removed, unless
    /// another writer has replaced it meanwhile (whose entry is whole and must stay).
    func entry(_ key: ResponseCacheKey, from head: CacheEntryFormat.Head, readFrom headFile: CacheFileIO.Status, touchingAt now: Date?) -> ReadAttempt
    {
        let headURL = headURL(for: key)
        let metadata = head.metadata
        let body: StoredBody
        if let name = metadata.bodyFile {
            guard let file = openBody(name, length: metadata.bodyLength, checksum: metadata.bodyChecksum, key: key) else {
                return removeIfUnchanged(headURL, wasOpenedAs: headFile) ? .missing : .replacedMeanwhile
            }
            body = .file(file)
        } else {
            body = .data(head.inlineBody)
        }
        if let now { CacheFileIO.setModified(headURL, to: now) }
        return .found(
            StoredEntry(
                key: key, head: CacheEntryFormat.entryHead(metadata), url: metadata.url.flatMap(URL.init(string:)),
                version: metadata.version, body: body))
    }

    /// The decoded head file at `url`; a file that is not a valid head of this version is removed
    /// (unless another one replaced it meanwhile).
    func readHead(at url: URL) -> CacheEntryFormat.Head? {
        readHeadFile(at: url)?.head
    }

    /// The decoded head file at `url` and the status of the file it was read from (to tell later
    /// whether the name still holds that file); an invalid one is removed as in ``readHead(at:)``.
    func readHeadFile(at url: URL) -> (head: CacheEntryFormat.Head, file: CacheFileIO.Status)? {
        guard let (descriptor, status) = CacheFileIO.openStoreFile(url, writable: false) else { return nil }
        defer { CacheFileIO.close(descriptor) }
        if status.size <= Int64(Self.maximumHeadFileSize), let file = CacheFileIO.read(descriptor, at: 0, count: Int(status.size)),
            file.count == Int(status.size), case .valid(let head) = CacheEntryFormat.decodeHead(file)
        {
            return (head, status)
        }
        removeIfUnchanged(url, wasOpenedAs: status)
        return nil
    }

    /// Opens a body file and checks its magic, its size and its block checksums against the
    /// head's `checksum`; its blocks are checked as they are read (``StoredBodyFile``).
    private func openBody(_ name: String, length: Int64, checksum: String?, key: ResponseCacheKey) -> StoredBodyFile? {
        let bodyURL = url(name)
        guard let (descriptor, status) = CacheFileIO.openStoreFile(bodyURL, writable: false) else { return nil }
        let magic = CacheEntryFormat.bodyMagic
        let blocks = CacheBodyChecksums.blockCount(forLength: length)
        let trailerOffset = Int64(magic.count) + length
        guard status.size == trailerOffset + Int64(blocks) * 8,
            CacheFileIO.read(descriptor, at: 0, count: magic.count) == magic,
            let trailer = CacheFileIO.read(descriptor, at: trailerOffset, count: blocks * 8),
            let sums = CacheBodyChecksums.sums(inTrailer: trailer), sums.count == blocks,
            CacheBodyChecksums.digest(of: sums) == checksum
        else {
            removeIfUnchanged(bodyURL, openAs: descriptor)
            CacheFileIO.close(descriptor)
            return nil
        }
        return StoredBodyFile(
            descriptor: descriptor, url: bodyURL, bodyOffset: Int64(magic.count), length: length, blockSums: sums,
            onDamage: { removeEntry(key, ifItsBodyIs: name) })
    }

    /// Removes the entry for `key` if its head still names the body file `name` (found damaged),
    /// and that body file.
    private func removeEntry(_ key: ResponseCacheKey, ifItsBodyIs name: String) {
        let headURL = headURL(for: key)
        if let (head, file) = readHeadFile(at: headURL), head.metadata.bodyFile == name { removeIfUnchanged(headURL, wasOpenedAs: file) }
        CacheFileIO.remove(url(name))
    }

    /// Removes `url` if it is still the file opened with status `opened` (a reader that found a
    /// damaged file must not remove a valid one another writer renamed into place meanwhile);
    /// returns whether that file is gone from `url` (removed now, or before). The modification
    /// time is compared too: a file swapped out as a spare (``CacheSpareFiles``) can come back
    /// under the same name, rewritten.
    @discardableResult
    private func removeIfUnchanged(_ url: URL, wasOpenedAs opened: CacheFileIO.Status) -> Bool {
        guard let current = CacheFileIO.status(url) else { return true }
        guard opened.device == current.device, opened.inode == current.inode, opened.modified == current.modified else { return false }
        CacheFileIO.remove(url)
        return true
    }

    /// ``removeIfUnchanged(_:wasOpenedAs:)`` for a file still open as `descriptor`.
    private func removeIfUnchanged(_ url: URL, openAs descriptor: Int32) {
        guard let opened = CacheFileIO.status(of: descriptor) else { return }
        removeIfUnchanged(url, wasOpenedAs: opened)
    }

    /// Marks the entry for `key` used at `now` (its head's modification time).
    func touch(_ key: ResponseCacheKey, at now: Date) {
        guard directoryGuard.mayRead() else { return }
        CacheFileIO.setModified(headURL(for: key), to: now)
    }

    // MARK: Writing

    /// Sets the modification time of the head just written at `url` to `now`, the entry's last
    /// use. With ``FastPaths`` on, not when `now` is within a second of the system clock: the
    /// write itself set it to the system's time (a cache with a clock of its own still sets it).
    private func markWritten(_ url: URL, usedAt now: Date) {
        if FastPaths.isOn(.disk), abs(now.timeIntervalSinceNow) < 1 { return }
        CacheFileIO.setModified(url, to: now)
    }

    /// A new locked temporary file in the directory (created if needed, private to this user).
    func createTemporaryFile() -> (url: URL, descriptor: Int32)? {
        guard directoryGuard.mayWrite() else { return nil }
        let temporary = url(CacheEntryFormat.newTemporaryFileName())
        if let descriptor = CacheFileIO.createLocked(temporary) { return (temporary, descriptor) }
        guard directoryGuard.recreate() else { return nil }
        return CacheFileIO.createLocked(temporary).map { (temporary, $0) }
    }

    /// Writes `contents` to `destination` atomically (temporary file, then rename); returns whether
    /// it did. With ``FastPaths`` on, a file already at `destination` is swapped out rather than
    /// unlinked, and kept for the next write (``CacheSpareFiles``).
    private func writeAtomically(_ contents: Data, to destination: URL) -> Bool {
        let spare = FastPaths.isOn(.disk) ? spares.take() : nil
        guard let (temporary, descriptor) = spare.map({ ($0.url, $0.descriptor) }) ?? createTemporaryFile() else { return false }
        // A spare still holds the head it was: overwritten from its start, then cut to length if
        // it was longer (a truncate is a journalled metadata change, so not when it is not needed).
        guard CacheFileIO.writeAll(descriptor, contents),
            (spare?.length ?? 0) <= Int64(contents.count) || CacheFileIO.truncate(descriptor, to: contents.count)
        else {
            CacheFileIO.remove(temporary)
            CacheFileIO.close(descriptor)
            return false
        }
        // Swapped only with a store file: a directory (which a swap would move) or a link or FIFO
        // there is replaced by a rename, or the write fails.
        if FastPaths.isOn(.disk), CacheFileIO.status(destination)?.isKept == true, CacheFileIO.exchange(temporary, destination) {
            // The new head is in place (its lock goes with this descriptor, as after a rename);
            // the old one is under the temporary name now.
            CacheFileIO.close(descriptor)
            spares.keep(temporary)
            return true
        }
        defer { CacheFileIO.close(descriptor) }
        guard CacheFileIO.rename(temporary, to: destination) else {
            CacheFileIO.remove(temporary)
            return false
        }
        return true
    }

    /// What a publication put on disk.
    struct Published {
        /// Bytes written (head plus body file).
        var bytes: Int64
        /// The published body file, open, when the body is in a file.
        var bodyFile: StoredBodyFile?
    }

    /// Publishes `entry` for its key: `spilledBody` (whose ownership passes to this call;
    /// `entry.body` is then ignored) is renamed into place first, then the head is written,
    /// replacing any earlier entry, whose body file is removed. Without `spilledBody` the entry's
    /// body must be `.data`: bodies up to `inlineLimit` bytes go inline, larger ones into a new
    /// body file.
    func publish(_ entry: StoredEntry, spilledBody: SpilledBody?, inlineLimit: Int, now: Date) -> Published? {
        guard directoryGuard.mayWrite() else {
            if let spilledBody {
                CacheFileIO.remove(spilledBody.url)
                CacheFileIO.close(spilledBody.descriptor)
            }
            return nil
        }
        var spilled = spilledBody
        if spilled == nil, case .data(let data) = entry.body, data.count > inlineLimit {
            guard let created = createTemporaryFile() else { return nil }
            let sums = CacheBodyChecksums.of(data)
            guard CacheFileIO.writeAll(created.descriptor, CacheEntryFormat.bodyMagic), CacheFileIO.writeAll(created.descriptor, data),
                CacheFileIO.writeAll(created.descriptor, CacheBodyChecksums.trailer(sums))
            else {
                CacheFileIO.remove(created.url)
                CacheFileIO.close(created.descriptor)
                return nil
            }
            spilled = SpilledBody(url: created.url, descriptor: created.descriptor, length: Int64(data.count), blockSums: sums)
        }
        let previousBody = readHead(at: headURL(for: entry.key)).flatMap { $0.metadata.key == entry.key.rawValue ? $0.metadata.bodyFile : nil }
        var bodyName: String?
        var bytes: Int64 = 0
        var bodyLength = entry.body.length
        if let spilled {
            let name = CacheEntryFormat.newBodyFileName(entry.key)
            let expectedSize = Int64(CacheEntryFormat.bodyMagic.count) + spilled.length + Int64(spilled.blockSums.count) * 8
            guard spilled.blockSums.count == CacheBodyChecksums.blockCount(forLength: spilled.length),
                CacheFileIO.size(of: spilled.descriptor) == expectedSize, CacheFileIO.rename(spilled.url, to: url(name))
            else {
                CacheFileIO.remove(spilled.url)
                CacheFileIO.close(spilled.descriptor)
                return nil
            }
            bodyName = name
            bytes += expectedSize
            bodyLength = spilled.length
        }
        let inline: Data
        if bodyName == nil, case .data(let data) = entry.body { inline = data } else { inline = Data() }
        var metadata = CacheEntryFormat.metadata(for: entry, bodyFile: bodyName)
        metadata.bodyLength = bodyLength
        metadata.bodyChecksum = spilled.map { CacheBodyChecksums.digest(of: $0.blockSums) }
        guard let head = CacheEntryFormat.encodeHead(metadata, inlineBody: inline),
            writeAtomically(head, to: headURL(for: entry.key))
        else {
            if let spilled, let bodyName {
                CacheFileIO.remove(url(bodyName))
                CacheFileIO.close(spilled.descriptor)
            }
            return nil
        }
        bytes += Int64(head.count)
        markWritten(headURL(for: entry.key), usedAt: now)
        var bodyFile: StoredBodyFile?
        if let spilled, let bodyName {
            // The body is referenced now: a scan may judge it (it skips locked body files).
            CacheFileIO.unlock(spilled.descriptor)
            let key = entry.key
            bodyFile = StoredBodyFile(
                descriptor: spilled.descriptor, url: url(bodyName),
                bodyOffset: Int64(CacheEntryFormat.bodyMagic.count), length: bodyLength, blockSums: spilled.blockSums,
                onDamage: { removeEntry(key, ifItsBodyIs: bodyName) })
        }
        if let previousBody, previousBody != bodyName { CacheFileIO.remove(url(previousBody)) }
        return Published(bytes: bytes, bodyFile: bodyFile)
    }

    /// Writes `entry` (whose body is inline, `.data`, as memory holds it) with `entryHead` as the
    /// head file for its key, without reading the file first: after a 304 validated `entry`, its
    /// body with the new head is what the key should hold. Returns the updated entry, or `nil`
    /// when the body is not inline or the write failed.
    func replaceHead(of entry: StoredEntry, with entryHead: CacheEntryHead, now: Date) -> StoredEntry? {
        guard case .data(let body) = entry.body, body.count <= CacheStore.spillThreshold, directoryGuard.mayWrite() else { return nil }
        var updated = entry
        updated.head = entryHead
        let headURL = headURL(for: entry.key)
        guard let file = CacheEntryFormat.encodeHead(CacheEntryFormat.metadata(for: updated, bodyFile: nil), inlineBody: body),
            writeAtomically(file, to: headURL)
        else { return nil }
        markWritten(headURL, usedAt: now)
        return updated
    }

    /// Rewrites only the head of the entry stored for `head.key` (after a 304), keeping its body
    /// (inline bytes or body file). Returns the updated entry, or `nil` if none is stored.
    func updateHead(of key: ResponseCacheKey, to entryHead: CacheEntryHead, now: Date) -> StoredEntry? {
        guard directoryGuard.mayWrite() else { return nil }
        let headURL = headURL(for: key)
        guard let current = readHead(at: headURL), current.metadata.key == key.rawValue else { return nil }
        var metadata = current.metadata
        let replaced = CacheEntryFormat.metadata(
            for: StoredEntry(key: key, head: entryHead, url: nil, version: nil, body: .data(Data())), bodyFile: nil)
        metadata.statusCode = replaced.statusCode
        metadata.headers = replaced.headers
        metadata.requestTime = replaced.requestTime
        metadata.responseTime = replaced.responseTime
        metadata.varyingRequestHeaders = replaced.varyingRequestHeaders
        metadata.requestHadAuthorization = replaced.requestHadAuthorization
        guard let file = CacheEntryFormat.encodeHead(metadata, inlineBody: current.inlineBody),
            writeAtomically(file, to: headURL)
        else { return nil }
        // A body file must be opened (and checked) as a read does; an inline body is already in
        // hand, and reading back the head just written would only decode it again.
        guard metadata.bodyFile == nil else { return read(key, touchingAt: now) }
        markWritten(headURL, usedAt: now)
        return StoredEntry(
            key: key, head: CacheEntryFormat.entryHead(metadata), url: metadata.url.flatMap(URL.init(string:)),
            version: metadata.version, body: .data(current.inlineBody))
    }

    // MARK: Removing

    /// Removes the entry for `key` (head, then its body file).
    func remove(_ key: ResponseCacheKey) {
        guard directoryGuard.mayRead() else { return }
        let headURL = headURL(for: key)
        let body = readHead(at: headURL)?.metadata.bodyFile
        CacheFileIO.remove(headURL)
        if let body { CacheFileIO.remove(url(body)) }
    }

    /// Removes every entry whose metadata `shouldRemove` selects (and every invalid one), with its
    /// body; other files in the directory are left alone.
    func removeAll(where shouldRemove: (CacheEntryFormat.Metadata) -> Bool) {
        let listing = list()
        for name in listing.heads.keys.sorted() {
            let headURL = url(name)
            guard let head = readHead(at: headURL) else { continue }  // invalid: readHead removed it
            guard shouldRemove(head.metadata) else { continue }
            CacheFileIO.remove(headURL)
            if let body = head.metadata.bodyFile { CacheFileIO.remove(url(body)) }
        }
    }

    /// Removes every entry, body file and abandoned temporary file (and any name of the store's
    /// forms that is not a store file).
    func removeEverything() {
        let listing = list()
        for name in listing.foreign { CacheFileIO.remove(url(name)) }
        for name in listing.heads.keys { CacheFileIO.remove(url(name)) }
        for bodies in listing.bodies.values { for body in bodies { CacheFileIO.remove(url(body.name)) } }
        for name in listing.temporaries { CacheFileIO.removeIfUnlocked(url(name)) }
    }

    // MARK: Scanning

    /// The store's files in the directory.
    struct Listing {
        /// Head file name → status.
        var heads: [String: CacheFileIO.Status] = [:]
        /// Key digest → body files.
        var bodies: [Substring: [(name: String, status: CacheFileIO.Status)]] = [:]
        var temporaries: [String] = []
        var temporaryBytes: Int64 = 0
        /// Names of the store's forms that are not store files (links, FIFOs, devices, sockets,
        /// other users' files, files with other links): never opened, removed by a scan.
        var foreign: [String] = []

        var size: Int64 {
            heads.values.reduce(0) { $0 + $1.size } + bodies.values.reduce(0) { $0 + $1.reduce(0) { $0 + $1.status.size } } + temporaryBytes
        }
    }

    func list() -> Listing {
        var listing = Listing()
        guard directoryGuard.mayRead() else { return listing }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names {
            let isHead = CacheEntryFormat.isHeadFileName(name)
            let digest = isHead ? nil : CacheEntryFormat.keyDigest(ofBodyFile: name)
            guard isHead || digest != nil || CacheEntryFormat.isTemporaryFileName(name), let status = CacheFileIO.status(url(name)) else {
                continue
            }
            guard status.isKept else {
                // A directory cannot be unlinked, and is no file of the store's: left alone.
                if !status.isDirectory { listing.foreign.append(name) }
                continue
            }
            if isHead {
                listing.heads[name] = status
            } else if let digest {
                listing.bodies[digest, default: []].append((name, status))
            } else {
                listing.temporaries.append(name)
                listing.temporaryBytes += status.size
            }
        }
        return listing
    }

    /// Bytes the store's files take now.
    func size() -> Int64 {
        list().size
    }

    /// Cleans the directory and, if it holds more than `capacity` bytes, evicts the least recently
    /// used entries until it holds at most `target`. Cleaning removes temporary files no live
    /// process holds (left by a killed writer), heads of another schema version or damaged, body
    /// files no head names (unless a writer still holds them), and names of the store's forms
    /// that are not store files (the names only: a link's target is never touched). Returns the
    /// bytes left.
    @discardableResult
    func scan(capacity: Int64, target: Int64) -> Int64 {
        directoryGuard.forget()
        var listing = list()
        for name in listing.foreign { CacheFileIO.remove(url(name)) }
        listing.temporaries = listing.temporaries.filter { !CacheFileIO.removeIfUnlocked(url($0)) }
        listing.temporaryBytes = listing.temporaries.reduce(0) { $0 + (CacheFileIO.status(url($1))?.size ?? 0) }

        // Heads of another version or damaged: a cheap look at the first line of each.
        for name in listing.heads.keys where !hasCurrentMagic(url(name)) {
            CacheFileIO.remove(url(name))
            listing.heads[name] = nil
        }
        // Body files: keep only the one its key's head names (and any still held by a writer).
        for (digest, bodies) in listing.bodies {
            let headName = "\(digest).\(CacheEntryFormat.headExtension)"
            let referenced = listing.heads[headName] == nil ? nil : readHead(at: url(headName))?.metadata.bodyFile
            if listing.heads[headName] != nil, referenced == nil, !FileManager.default.fileExists(atPath: url(headName).path) {
                listing.heads[headName] = nil  // readHead found it invalid and removed it
            }
            let kept = bodies.filter { body in body.name == referenced || !CacheFileIO.removeIfUnlocked(url(body.name)) }
            listing.bodies[digest] = kept.isEmpty ? nil : kept
        }

        var total = listing.size
        guard total > capacity else { return total }
        let byAge = listing.heads.sorted { ($0.value.modified, $0.key) < ($1.value.modified, $1.key) }
        for (name, status) in byAge {
            guard total > target else { break }
            CacheFileIO.remove(url(name))
            total -= status.size
            let digest = name.prefix(64)
            // A body file still locked belongs to a commit in progress for the same key.
            for body in listing.bodies[digest] ?? [] where CacheFileIO.removeIfUnlocked(url(body.name)) {
                total -= body.status.size
            }
            listing.bodies[digest] = nil
        }
        return total
    }

    private func hasCurrentMagic(_ url: URL) -> Bool {
        guard let descriptor = CacheFileIO.openForReading(url) else { return true }  // gone meanwhile: nothing to do
        defer { CacheFileIO.close(descriptor) }
        let magic = CacheEntryFormat.headMagic
        return CacheFileIO.read(descriptor, at: 0, count: magic.count) == magic
    }
}
