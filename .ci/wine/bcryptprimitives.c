/* Stand-in for Windows' bcryptprimitives.dll under Wine 8, which lacks
 * ProcessPrng (Rust's std imports it for random numbers since 1.78).
 * It forwards to RtlGenRandom, exported by advapi32 as SystemFunction036.
 * Build: x86_64-w64-mingw32-gcc -shared -O2 -o bcryptprimitives.dll \
 *        bcryptprimitives.c -ladvapi32 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
