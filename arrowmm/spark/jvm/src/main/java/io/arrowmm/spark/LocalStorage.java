package io.arrowmm.spark;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Local files through java.nio: positioned reads of a {@link FileChannel} (the reader's fast
 * path), hard links as the commit point ({@code link(2)} never replaces a name), renames of a
 * task's hidden temporary at commit, fsync of files and folders.
 */
final class LocalStorage implements Storage {
  static final LocalStorage INSTANCE = new LocalStorage();

  private LocalStorage() {}

  @Override
  public String child(String dir, String name) {
    return Path.of(dir).resolve(name).toString();
  }

  @Override
  public String name(String path) {
    return Path.of(path).getFileName().toString();
  }

  @Override
  public String parent(String path) {
    Path p = Path.of(path).getParent();
    return p == null ? "/" : p.toString();
  }

  @Override
  public Stat stat(String path) throws IOException {
    try {
      Path p = Path.of(path);
      BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
      return new Stat(path, p.getFileName() == null ? "/" : p.getFileName().toString(), a.size(),
          a.lastModifiedTime().toMillis(), a.isDirectory());
    } catch (NoSuchFileException e) {
      return null;
    }
  }

  @Override
  public List<Stat> list(String dir) throws IOException {
    List<Stat> out = new ArrayList<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of(dir))) {
      for (Path c : ds) {
        boolean isDir = Files.isDirectory(c);
        boolean isFile = !isDir && Files.isRegularFile(c);
        out.add(new Stat(c.toString(), c.getFileName().toString(), isFile ? -1 : 0, 0,
            isDir || !isFile));
      }
    } catch (NoSuchFileException | NotDirectoryException e) {
      return null;
    }
    return out;
  }

  private static boolean hasMagic(String p) {
    return p.indexOf('*') >= 0 || p.indexOf('?') >= 0 || p.indexOf('[') >= 0;
  }

  /** Glob matches, component by component. */
  @Override
  public List<String> glob(String pattern) throws IOException {
    Path pat = Path.of(pattern);
    Path root = pat.isAbsolute() ? pat.getRoot() : Path.of("");
    List<Path> current = new ArrayList<>();
    current.add(root);
    for (Path part : pat) {
      String comp = part.toString();
      List<Path> next = new ArrayList<>();
      for (Path dir : current) {
        if (!hasMagic(comp)) {
          Path child = dir.resolve(comp);
          if (Files.exists(child)) {
            next.add(child);
          }
          continue;
        }
        Path d = dir.toString().isEmpty() ? Path.of(".") : dir;
        if (!Files.isDirectory(d)) {
          continue;
        }
        PathMatcher m = FileSystems.getDefault().getPathMatcher("glob:" + comp);
        List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(d)) {
          for (Path c : ds) {
            String name = c.getFileName().toString();
            if (!name.startsWith("_") && !name.startsWith(".") && m.matches(Path.of(name))) {
              found.add(dir.resolve(name));
            }
          }
        }
        found.sort(null);
        next.addAll(found);
      }
      current = next;
    }
    List<String> out = new ArrayList<>();
    for (Path p : current) {
      out.add(p.toAbsolutePath().normalize().toString());
    }
    return out;
  }

  /** A {@link FileChannel}'s positioned reads. */
  static final class ChannelInput implements Input {
    final FileChannel channel;

    ChannelInput(FileChannel channel) {
      this.channel = channel;
    }

    @Override
    public long size() throws IOException {
      return channel.size();
    }

    @Override
    public int read(ByteBuffer into, long position) throws IOException {
      return channel.read(into, position);
    }

    @Override
    public boolean local() {
      return true;
    }

    @Override
    public void close() throws IOException {
      channel.close();
    }
  }

  @Override
  public Input open(String path) throws IOException {
    return new ChannelInput(FileChannel.open(Path.of(path), StandardOpenOption.READ));
  }

  @Override
  public byte[] readSmall(String path) throws IOException {
    try {
      return Files.readAllBytes(Path.of(path));
    } catch (NoSuchFileException e) {
      return null;
    }
  }

  @Override
  public Output create(String path) throws IOException {
    FileChannel ch = FileChannel.open(Path.of(path), StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE);
    return new Output() {
      @Override
      public WritableByteChannel channel() {
        return ch;
      }

      @Override
      public void sync() throws IOException {
        ch.force(true);
      }

      @Override
      public void close() throws IOException {
        ch.close();
      }
    };
  }

  private static Path writeTemporary(Path dir, byte[] data) throws IOException {
    Path tmp = dir.resolve(".tmp-jvm-" + UUID.randomUUID().toString().replace("-", ""));
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.wrap(data);
      while (b.hasRemaining()) {
        ch.write(b);
      }
      ch.force(true);
    }
    return tmp;
  }

  @Override
  public boolean createIfAbsent(String path, byte[] data) throws IOException {
    Path target = Path.of(path);
    Path dir = target.getParent();
    Path tmp = writeTemporary(dir, data);
    try {
      try {
        Files.createLink(target, tmp);  // never replaces: the commit point
      } catch (FileAlreadyExistsException e) {
        return false;
      } catch (UnsupportedOperationException e) {
        throw new ArrowmmException(dir + ": cannot create " + target.getFileName() + " only if "
            + "absent: this filesystem refuses hard links, which the commit protocol needs "
            + "on local filesystems to create a version without replacing one");
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
    fsyncDir(dir);
    return true;
  }

  @Override
  public void replace(String path, byte[] data) throws IOException {
    Path target = Path.of(path);
    Path tmp = writeTemporary(target.getParent(), data);
    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  static void fsyncDir(Path dir) {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException e) {
      // some platforms cannot open a folder for fsync; the link itself is atomic
    }
  }

  @Override
  public boolean delete(String path) throws IOException {
    return Files.deleteIfExists(Path.of(path));
  }

  @Override
  public boolean deleteEmptyDirectory(String path) throws IOException {
    Path p = Path.of(path);
    if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
      return false;
    }
    try {
      return Files.deleteIfExists(p);
    } catch (DirectoryNotEmptyException e) {
      return false;
    }
  }

  @Override
  public void mkdirs(String dir) throws IOException {
    Files.createDirectories(Path.of(dir));
  }

  @Override
  public boolean renamesTaskFiles() {
    return true;
  }

  @Override
  public void rename(String from, String to) throws IOException {
    Files.move(Path.of(from), Path.of(to), StandardCopyOption.ATOMIC_MOVE);
  }

  @Override
  public String commitPrimitive(String dir) {
    return "a hard link of a complete temporary file (link(2) never replaces a name)";
  }
}
