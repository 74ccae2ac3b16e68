/* Helper of .ci/windows-smoke, run under Wine: plays another program at a
 * zenpak lock file.
 *   holdlock lock PATH MS   open PATH (sharing read, write and delete),
 *                           lock it as zenpak does, print "holding", keep
 *                           it MS milliseconds, exit 0.
 *   holdlock open PATH MS   open PATH for reading sharing only reading, as a
 *                           running game holds its .pak, print "holding",
 *                           keep it MS milliseconds, exit 0.
 *   holdlock read PATH MS   for MS milliseconds, open PATH as another
 *                           zenpak reads it (sharing read, write and
 *                           delete), read it, keep it open 2 ms, close it,
 *                           wait 1 ms, again; print "reading" first and
 *                           the number of reads last, exit 0.
 *   holdlock delete PATH    try to delete PATH: exit 0 when deleted, 3 when
 *                           refused because a process has it open without
 *                           delete sharing, 1 on any other error.
 *   holdlock link LINK TARGET  make LINK a symbolic link to the file TARGET
 *                           (as a repository checked out on Windows, or an
 *                           unpacked archive, can): exit 0 when made and
 *                           seen as a reparse point, 4 when this system
 *                           cannot make one (printing why), 1 otherwise.
 * Build: x86_64-w64-mingw32-gcc -municode -O2 -o holdlock.exe holdlock.c */
#include <windows.h>
#include <stdio.h>
#include <wchar.h>

int wmain(int argc, wchar_t **argv)
{
    if (argc == 4 && wcscmp(argv[1], L"lock") == 0) {
        HANDLE file = CreateFileW(argv[2], GENERIC_READ | GENERIC_WRITE,
                                  FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                                  NULL, OPEN_ALWAYS, 0, NULL);
        OVERLAPPED whole = {0};
        if (file == INVALID_HANDLE_VALUE
            || !LockFileEx(file, LOCKFILE_EXCLUSIVE_LOCK, 0, MAXDWORD, MAXDWORD, &whole)) {
            printf("holdlock: error %lu\n", GetLastError());
            return 1;
        }
        printf("holding\n");
        fflush(stdout);
        Sleep((DWORD)_wtoi(argv[3]));
        CloseHandle(file);
        return 0;
    }
    if (argc == 4 && wcscmp(argv[1], L"open") == 0) {
        HANDLE file = CreateFileW(argv[2], GENERIC_READ, FILE_SHARE_READ, NULL,
                                  OPEN_EXISTING, 0, NULL);
        if (file == INVALID_HANDLE_VALUE) {
            printf("holdlock: error %lu\n", GetLastError());
            return 1;
        }
        printf("holding\n");
        fflush(stdout);
        Sleep((DWORD)_wtoi(argv[3]));
        CloseHandle(file);
        return 0;
    }
    if (argc == 4 && wcscmp(argv[1], L"read") == 0) {
        DWORD end = GetTickCount() + (DWORD)_wtoi(argv[3]);
        long reads = 0;
        static char buffer[65536];
        printf("reading\n");
        fflush(stdout);
        while (GetTickCount() < end) {
            HANDLE file = CreateFileW(argv[2], GENERIC_READ,
                                      FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                                      NULL, OPEN_EXISTING, 0, NULL);
            if (file != INVALID_HANDLE_VALUE) {
                DWORD got;
                ReadFile(file, buffer, sizeof buffer, &got, NULL);
                Sleep(2);
                CloseHandle(file);
                reads++;
            }
            Sleep(1);
        }
        printf("%ld reads\n", reads);
        return 0;
    }
    if (argc == 3 && wcscmp(argv[1], L"delete") == 0) {
        if (DeleteFileW(argv[2]))
            return 0;
        DWORD error = GetLastError();
        printf("holdlock: delete refused, error %lu\n", error);
        return error == ERROR_SHARING_VIOLATION ? 3 : 1;
    }
    if (argc == 4 && wcscmp(argv[1], L"link") == 0) {
        /* SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE: developer mode. */
        if (!CreateSymbolicLinkW(argv[2], argv[3], 0x2)) {
            printf("holdlock: CreateSymbolicLinkW failed, error %lu\n", GetLastError());
            return 4;
        }
        DWORD attributes = GetFileAttributesW(argv[2]);
        if (attributes == INVALID_FILE_ATTRIBUTES || !(attributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
            printf("holdlock: the link is not seen as a reparse point (attributes %lx)\n", attributes);
            return 4;
        }
        return 0;
    }
    fprintf(stderr, "usage: holdlock lock PATH MS | holdlock open PATH MS | holdlock read PATH MS | holdlock delete PATH | holdlock link LINK TARGET\n");
    return 2;
}
